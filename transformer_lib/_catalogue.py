"""The library's catalogue of messages, and the language it is read in.

The bottom of the package, below the two modules that read it without importing each other:
:func:`transformer_lib._checks.fail`, the house error every module raises, and
:mod:`transformer_lib.i18n`, which checks the language (with ``fail``) and speaks to the
student. The catalogue is ``locale/<lang>/LC_MESSAGES/transformer_lib.po``, package data.
"""

from __future__ import annotations

import functools
import gettext
import io
import os
from importlib import resources

LOCALE_DIR = resources.files(__package__) / "locale"
DOMAIN = "transformer_lib"
LANGUAGES = ("en", "zh_CN")


def language_setting() -> str:
    """``COURSE_LANG`` as the environment or ``i18n.set_language`` left it (``en`` when unset
    or empty), not yet checked: :func:`transformer_lib.i18n.current_language` checks it."""
    return os.environ.get("COURSE_LANG", "").strip() or "en"


@functools.cache
def catalogue(language: str):
    """The language's catalogue (a babel ``Catalog``), read from its .po file."""
    from babel.messages import pofile

    with (LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po").open("rb") as po:
        return pofile.read_po(po, locale=language)


@functools.cache
def translations(language: str) -> gettext.NullTranslations:
    if language == "en":
        return gettext.NullTranslations()
    # Compiled from the .po on first use (no .mo file to go stale beside its source).
    from babel.messages import mofile

    compiled = io.BytesIO()
    mofile.write_mo(compiled, catalogue(language))
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def error_text(message: str) -> str:
    """``message``, part of an error, in the course's language; in English while
    ``COURSE_LANG`` names no language (the error that says so is the one being written).
    ``fail`` looks its templates up with it, and a caller a value of ``fail`` that is itself
    a message (``kind=error_text(kind)``)."""
    language = language_setting()
    return translations(language if language in LANGUAGES else "en").gettext(message)
