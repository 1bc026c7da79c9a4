from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from apps.accounts.models import User
        from apps.accounts.tokens import revoke_tokens_on_credentials_change

        post_save.connect(
            revoke_tokens_on_credentials_change,
            sender=User,
            dispatch_uid="accounts.revoke_tokens_on_credentials_change",
        )
