from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from config.demo import DEMO_EMAIL, DEMO_PASSWORD, create_demo_user


class Command(BaseCommand):
    help = "Create the demo user with sample memories (once) and print how to log in."

    def handle(self, *args: Any, **options: Any) -> None:
        _user, created = create_demo_user()
        verb = "Created" if created else "Found"
        self.stdout.write(
            self.style.SUCCESS(f"{verb} demo user: email {DEMO_EMAIL}  password {DEMO_PASSWORD}")
        )
