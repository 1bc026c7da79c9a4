from pathlib import Path

from django.db import migrations

from apps.screening.rubric_files import load_rubric_text, parse_rubric, save_rubric

PBIG = Path(__file__).resolve().parent.parent / "rubrics" / "pbig.yaml"


def load_pbig(apps, schema_editor):
    spec = parse_rubric(load_rubric_text(PBIG.read_text(encoding="utf-8")))
    save_rubric(
        spec,
        rubric_model=apps.get_model("screening", "Rubric"),
        dimension_model=apps.get_model("screening", "Dimension"),
        make_default=True,
    )


class Migration(migrations.Migration):
    dependencies = [("screening", "0001_initial")]
    operations = [migrations.RunPython(load_pbig, migrations.RunPython.noop)]
