import factory

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Domain, Idea, Patent
from apps.screening.models import Assignment

PASSWORD = "correct-horse-battery"


class DomainFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Domain
        django_get_or_create = ["key"]

    key = factory.Sequence(lambda n: f"domain-{n}")
    name = factory.LazyAttribute(lambda o: o.key.replace("-", " ").title())


class PatentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Patent

    external_id = factory.Sequence(lambda n: f"US{10_000_000 + n}")
    domain = factory.SubFactory(DomainFactory)
    title = factory.Sequence(lambda n: f"Method for adaptive signal processing {n}")
    abstract = "A method that filters sensor signals adaptively to reduce noise in real time."
    claims = "1. A method comprising receiving a signal and adapting a filter to it."


class IdeaFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Idea

    external_id = factory.Sequence(lambda n: f"idea-{n}")
    patent = factory.SubFactory(PatentFactory)
    title = factory.Sequence(lambda n: f"Noise-cancelling inspection kit {n}")
    description = "A handheld kit that lets factory inspectors hear faults in machinery."
    implementation = "An adaptive filter runs on a small board clipped to the machine."
    differentiation = "Works in loud halls where current kits fail."
    source = "test-generator"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ["username"]
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.org")
    role = User.Role.REVIEWER
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def persist(obj, create, extracted, **kwargs):  # noqa: N805
        if create:
            obj.save()


class ReviewerFactory(UserFactory):
    role = User.Role.REVIEWER

    @factory.post_generation
    def profile(obj, create, extracted, **kwargs):  # noqa: N805
        if not create:
            return
        profile = ReviewerProfile.objects.create(
            user=obj, background=kwargs.get("background", ReviewerProfile.Background.TECHNICAL)
        )
        for domain in extracted or []:
            profile.domains.add(domain)


class AssignmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Assignment

    reviewer = factory.SubFactory(ReviewerFactory)
    idea = factory.SubFactory(IdeaFactory)
