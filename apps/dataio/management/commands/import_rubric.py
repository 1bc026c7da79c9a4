from django.core.management.base import CommandParser

from apps.dataio.management.base import ImportCommand


class Command(ImportCommand):
    help = "Import a rubric from a YAML or JSON file (see docs/formats.md); all or nothing."
    kind = "rubric"

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--default", action="store_true", help="make it the default rubric")
        parser.add_argument(
            "--domain",
            action="append",
            metavar="KEY",
            help="attach the rubric to this domain (repeatable; adds to the file's `domains`)",
        )
