import pytest

from apps.judges.engine.parsing import ReplyError, parse_reply


def parse(text, lo=1, hi=4):
    return parse_reply(text, scale_min=lo, scale_max=hi)


@pytest.mark.parametrize(
    "text",
    [
        '{"score": 3, "reason": "Concrete.", "confidence": 85}',
        '```json\n{"score": 3, "reason": "Concrete.", "confidence": 85}\n```',
        'Here is my answer:\n{"score": 3, "reason": "Concrete.", "confidence": 85}\nThanks!',
        "{'score': 3, 'reason': 'Concrete.', 'confidence': 85}",
        '{"score": 3, "reason": "Concrete.", "confidence": 85,}',
        '{"score": "3", "reason": "Concrete.", "confidence": "85"}',
        '{"score": 3.0, "reason": "Concrete.", "confidence": "85%"}',
        '{"Score": 3, "Reason": "Concrete.", "Confidence": 0.85}',
        '<think>Maybe {2}? no.</think>\n{"score": 3, "reason": "Concrete.", "confidence": 85}',
        "Score: 3\nConfidence: 85\nReason: Concrete.",
        '{"score": 3, "reason": "Concrete.", "confidence": 85',
    ],
)
def test_it_reads_messy_but_usable_replies(text):
    reply = parse(text)
    assert (reply.score, reply.confidence) == (3, 85)
    assert reply.reason in ("Concrete.", "")


def test_it_keeps_braces_inside_the_reason():
    reply = parse('{"score": 2, "reason": "uses {curly} words", "confidence": 90}')
    assert reply.reason == "uses {curly} words"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("I cannot rate this.", "no JSON object"),
        ('{"score": 7, "reason": "x", "confidence": 90}', "off the scale 1-4"),
        ('{"score": 0, "reason": "x", "confidence": 90}', "off the scale 1-4"),
        ('{"score": 2.5, "reason": "x", "confidence": 90}', "integer"),
        ('{"score": "high", "reason": "x", "confidence": 90}', "number"),
        ('{"score": true, "reason": "x", "confidence": 90}', "number"),
        ('{"reason": "x", "confidence": 90}', '"score"'),
        ('{"score": 2, "reason": "x"}', '"confidence"'),
        ('{"score": 2, "reason": "x", "confidence": 150}', "outside 0-100"),
    ],
)
def test_it_refuses_unusable_replies_with_a_reason(text, fragment):
    with pytest.raises(ReplyError) as info:
        parse(text)
    assert fragment in info.value.message


def test_a_category_level_zero_is_on_a_zero_based_scale():
    assert parse('{"score": 0, "reason": "Not B2B.", "confidence": 95}', 0, 3).score == 0


@pytest.mark.parametrize(
    ("text", "score", "confidence"),
    [
        ('{"score": 4.0, "reason": "r", "confidence": 1.0}', 4, 100),  # a real server's reply
        ('{"score": "4.0", "reason": "r", "confidence": "1.0"}', 4, 100),
        ('{"score": 4, "reason": "r", "confidence": 0.9}', 4, 90),
        ('{"score": 4, "reason": "r", "confidence": 1}', 4, 1),  # an integer 1 is 1 %
        ('{"score": 4, "reason": "r", "confidence": "1%"}', 4, 1),
        ('{"score": 4, "reason": "r", "confidence": 0}', 4, 0),
        # Cut by the text-mode stop sequence "}\n" (not returned), inside a code fence:
        ('```json\n{"score": 4, "reason": "r", "confidence": 70\n', 4, 70),
        ("Score: 4.0\nConfidence: 1.0\nReason: r", 4, 100),
    ],
)
def test_it_reads_numbers_the_way_real_models_write_them(text, score, confidence):
    reply = parse(text)
    assert (reply.score, reply.confidence) == (score, confidence)


def test_a_half_level_score_is_off_the_scale_and_refused():
    with pytest.raises(ReplyError, match="integer level, got 4.5"):
        parse('{"score": 4.5, "reason": "r", "confidence": 80}')


def test_a_reply_cut_inside_its_reason_keeps_its_score_and_confidence():
    reply = parse('{"score": 3, "confidence": 70, "reason": "The idea names one clear prod')
    assert (reply.score, reply.confidence) == (3, 70)
    assert reply.reason == "The idea names one clear prod"


def test_a_line_break_inside_the_reason_string_is_read():
    reply = parse('{ "score": 3, "reason": "First line.\nSecond line." ,"confidence": 0} ')
    assert (reply.score, reply.confidence) == (3, 0) and "Second line." in reply.reason
