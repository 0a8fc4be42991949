"""Generate the bundled toy English->German corpus, byte for byte reproducibly.

    python data/generate.py            # (re)write train/valid/test/longer.tsv + SHA256SUMS
    python data/generate.py --out DIR  # write them somewhere else
    python data/generate.py --check    # regenerate in a temp dir, compare bytes, exit 1 on drift

They are written into ``transformer_lib/data/bundled/``, where the library finds them as
package data (so an installed ``transformer_lib`` carries its corpus).

Only the standard library and one ``random.Random(SEED)`` are used, and nothing
iterates over a set or depends on hash order, so every run gives the same bytes.

Both sides of a pair are rendered from one parse. Every token carries the ids of
the "meaning atoms" it expresses (a noun, an article, a verb, the negation...), and
the gold alignment links each English token to each German token that shares an
atom. The grammar and the alignment conventions are described in data/README.md.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import random
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SEED = 1706_03762  # the arXiv id of "Attention Is All You Need"
SIZES = {"train": 24_000, "valid": 500, "test": 500}
N_LONGER = 400
# Where the library reads the corpus as package data (transformer_lib.data.DATA_DIR).
BUNDLED = Path(__file__).resolve().parents[1] / "transformer_lib" / "data" / "bundled"
MIN_LEN, MAX_LEN = 4, 15  # tokens per side in train/valid/test; longer.tsv exceeds MAX_LEN
FILES = ("train.tsv", "valid.tsv", "test.tsv", "longer.tsv")

Tok = tuple[str, tuple[int, ...]]  # a word and the atoms it expresses

# ---------------------------------------------------------------- vocabulary
# en  en_plural  de  de_plural  gender  kind
_NOUNS = """
man men Mann Männer m person
woman women Frau Frauen f person
child children Kind Kinder n person
girl girls Mädchen Mädchen n person
teacher teachers Lehrer Lehrer m person
friend friends Freund Freunde m person
doctor doctors Arzt Ärzte m person
mother mothers Mutter Mütter f person
father fathers Vater Väter m person
sister sisters Schwester Schwestern f person
dog dogs Hund Hunde m animal
cat cats Katze Katzen f animal
horse horses Pferd Pferde n animal
bird birds Vogel Vögel m animal
mouse mice Maus Mäuse f animal
apple apples Apfel Äpfel m food
cake cakes Kuchen Kuchen m food
egg eggs Ei Eier n food
book books Buch Bücher n text
letter letters Brief Briefe m text
newspaper newspapers Zeitung Zeitungen f text
story stories Geschichte Geschichten f text
song songs Lied Lieder n song
car cars Auto Autos n thing
ball balls Ball Bälle m thing
picture pictures Bild Bilder n thing
table tables Tisch Tische m thing
door doors Tür Türen f thing
window windows Fenster Fenster n thing
key keys Schlüssel Schlüssel m thing
bag bags Tasche Taschen f thing
cup cups Tasse Tassen f thing
flower flowers Blume Blumen f thing
gift gifts Geschenk Geschenke n thing
house houses Haus Häuser n place
garden gardens Garten Gärten m place
kitchen kitchens Küche Küchen f place
school schools Schule Schulen f place
park parks Park Parks m place
room rooms Zimmer Zimmer n place
city cities Stadt Städte f place
"""

# en  de  kinds it may describe (listed in English adjective order: size, age, quality, colour)
_ADJECTIVES = """
big groß person,animal,food,text,thing,place
small klein person,animal,food,text,thing,place
old alt person,animal,text,thing,place
young jung person,animal
new neu text,thing,place
beautiful schön person,animal,song,thing,place
good gut person,animal,food,text,song
funny lustig person,animal,text,song
hungry hungrig person,animal
tired müde person,animal
fast schnell animal,car
clean sauber thing,place
heavy schwer thing,text
red rot food,thing
"""

# en en_3sg particle | de_inf de_1sg de_3sg de_pl prefix | frame | subject | object | extra
# frame: intr, acc (accusative object), dat (dative object), ditr (dative + accusative),
# that (verb of saying, takes a "that" clause). "-" means none. "for" in extra: takes a
# "for ..." beneficiary.
_VERBS = """
see sees - | sehen sehe sieht sehen - | acc | person,animal | person,animal,food,text,thing | -
like likes - | mögen mag mag mögen - | acc | person,animal | person,animal,food,text,song,thing,place | -
read reads - | lesen lese liest lesen - | acc | person | book,letter,newspaper,story | -
eat eats - | essen esse isst essen - | acc | person,animal | food | -
buy buys - | kaufen kaufe kauft kaufen - | acc | person | food,book,newspaper,thing | for
find finds - | finden finde findet finden - | acc | person,animal | person,animal,food,text,thing | -
have has - | haben habe hat haben - | acc | person | animal,food,book,newspaper,thing | -
hear hears - | hören höre hört hören - | acc | person,animal | person,animal,song,story | -
write writes - | schreiben schreibe schreibt schreiben - | acc | person | text,song | for
carry carries - | tragen trage trägt tragen - | acc | person | food,book,ball,bag,cup,flower,gift,key | for
need needs - | brauchen brauche braucht brauchen - | acc | person,animal | food,book,thing | -
love loves - | lieben liebe liebt lieben - | acc | person | person,animal,song,place | -
visit visits - | besuchen besuche besucht besuchen - | acc | person | person,city,school,park | -
wash washes - | waschen wasche wäscht waschen - | acc | person | person,animal,car,cup,table,door,window | -
open opens - | öffnen öffne öffnet öffnen - | acc | person | door,window,bag,book,letter,gift | -
paint paints - | malen male malt malen - | acc | person | person,animal,flower,picture,door,table | for
call calls - | rufen rufe ruft rufen an | acc | person | person | -
invite invites - | laden lade lädt laden ein | acc | person | person | -
pick picks up | holen hole holt holen ab | acc | person | person,bag,key,gift,cake | -
look looks at | sehen sehe sieht sehen an | acc | person,animal | person,animal,thing,text | -
clean cleans up | räumen räume räumt räumen auf | acc | person | room,kitchen,house,table | -
help helps - | helfen helfe hilft helfen - | dat | person,animal | person,animal | -
follow follows - | folgen folge folgt folgen - | dat | person,animal | person,animal | -
give gives - | geben gebe gibt geben - | ditr | person | food,text,thing | -
show shows - | zeigen zeige zeigt zeigen - | ditr | person | food,text,thing,animal | -
bring brings - | bringen bringe bringt bringen - | ditr | person | food,text,thing | -
sleep sleeps - | schlafen schlafe schläft schlafen - | intr | person,animal | - | -
play plays - | spielen spiele spielt spielen - | intr | person,animal | - | -
sing sings - | singen singe singt singen - | intr | person,bird | - | -
run runs - | laufen laufe läuft laufen - | intr | person,animal | - | -
work works - | arbeiten arbeite arbeitet arbeiten - | intr | person | - | -
wait waits - | warten warte wartet warten - | intr | person,animal | - | -
laugh laughs - | lachen lache lacht lachen - | intr | person | - | -
know knows - | wissen weiß weiß wissen - | that | person | - | -
say says - | sagen sage sagt sagen - | that | person | - | -
think thinks - | denken denke denkt denken - | that | person | - | -
"""

# English, German, person (which picks the verb form on both sides)
PRONOUNS = (
    ("I", "ich", "1sg"),
    ("he", "er", "3sg"),
    ("she", "sie", "3sg"),
    ("we", "wir", "pl"),
    ("they", "sie", "pl"),
)
BE = {"1sg": ("am", "bin"), "3sg": ("is", "ist"), "pl": ("are", "sind")}
DO = {"1sg": "do", "3sg": "does", "pl": "do"}
MODALS = {  # en finite (1sg, 3sg, pl), de finite (1sg, 3sg, pl)
    "want": (("want", "wants", "want"), ("will", "will", "wollen")),
    "can": (("can", "can", "can"), ("kann", "kann", "können")),
    "must": (("must", "must", "must"), ("muss", "muss", "müssen")),
}
ADVERBS = (
    ("today", "heute"),
    ("tomorrow", "morgen"),
    ("now", "jetzt"),
    ("often", "oft"),
    ("sometimes", "manchmal"),
    ("usually", "normalerweise"),
)
PREPS = {
    "with": ("mit", "dat"),
    "without": ("ohne", "acc"),
    "for": ("für", "acc"),
    "in": ("in", "dat"),
}
SUBORDINATORS = {"because": "weil", "although": "obwohl", "when": "wenn", "that": "dass"}

CASES = ("nom", "acc", "dat")  # the order of the forms in the tables below
DEFINITE = {
    "m": ("der", "den", "dem"),
    "f": ("die", "die", "der"),
    "n": ("das", "das", "dem"),
    "pl": ("die", "die", "den"),
}
INDEFINITE = {
    "m": ("ein", "einen", "einem"),
    "f": ("eine", "eine", "einer"),
    "n": ("ein", "ein", "einem"),
}
NEGATIVE = {
    **{g: tuple("k" + d for d in ds) for g, ds in INDEFINITE.items()},
    "pl": ("keine", "keine", "keinen"),
}
# adjective endings: weak after der/die/das, mixed after ein/kein, strong with no article
WEAK = {
    "m": ("e", "en", "en"),
    "f": ("e", "e", "en"),
    "n": ("e", "e", "en"),
    "pl": ("en", "en", "en"),
}
MIXED = {
    "m": ("er", "en", "en"),
    "f": ("e", "e", "en"),
    "n": ("es", "es", "en"),
    "pl": ("en", "en", "en"),
}
STRONG_PLURAL = ("e", "e", "en")


@dataclass(frozen=True)
class Noun:
    en: str
    en_pl: str
    de: str
    de_pl: str
    gender: str
    kind: str

    def german(self, plural: bool, case: str) -> str:
        if not plural:
            return self.de
        # dative plural adds -n unless the plural already ends in -n or -s
        extra = "n" if case == "dat" and not self.de_pl.endswith(("n", "s")) else ""
        return self.de_pl + extra


@dataclass(frozen=True)
class Adjective:
    en: str
    de: str
    kinds: tuple[str, ...]

    def german(self, ending: str) -> str:
        stem = self.de[:-1] if self.de.endswith("e") else self.de  # müde + en -> müden
        return stem + ending if ending else self.de


@dataclass(frozen=True)
class Verb:
    en: str
    en_3sg: str
    particle: str | None  # English particle/preposition: "picks up", "looks at"
    de_forms: tuple[str, str, str, str]  # infinitive, 1sg, 3sg, plural (without prefix)
    prefix: str | None  # German separable prefix: "ruft ... an" / "anrufen"
    frame: str
    subjects: tuple[str, ...]
    objects: tuple[str, ...]
    takes_for: bool

    def german(self, person: str) -> str:
        return self.de_forms[{"1sg": 1, "3sg": 2, "pl": 3}[person]]

    @property
    def infinitive(self) -> str:
        return (self.prefix or "") + self.de_forms[0]


def _table(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


NOUNS = tuple(Noun(*row) for row in _table(_NOUNS))
ADJECTIVES = tuple(Adjective(en, de, tuple(k.split(","))) for en, de, k in _table(_ADJECTIVES))


def _verb(line: str) -> Verb:
    en, de, frame, subjects, objects, extra = (part.split() for part in line.split("|"))
    return Verb(
        en=en[0],
        en_3sg=en[1],
        particle=None if en[2] == "-" else en[2],
        de_forms=tuple(de[:4]),
        prefix=None if de[4] == "-" else de[4],
        frame=frame[0],
        subjects=tuple(subjects[0].split(",")),
        objects=tuple(objects[0].split(",")) if objects[0] != "-" else (),
        takes_for=extra[0] == "for",
    )


VERBS = tuple(_verb(line) for line in _VERBS.strip().splitlines())


@functools.cache
def nouns_of(kinds: tuple[str, ...]) -> tuple[Noun, ...]:
    """Nouns whose kind (or English name) is listed, in table order."""
    return tuple(n for n in NOUNS if n.kind in kinds or n.en in kinds)


@functools.cache
def adjectives_for(kind: str, noun: str = "") -> tuple[Adjective, ...]:
    """Adjectives that may describe a noun of `kind` (or this very `noun`)."""
    return tuple(a for a in ADJECTIVES if kind in a.kinds or noun in a.kinds)


@functools.cache
def verbs_of(frames: tuple[str, ...]) -> tuple[Verb, ...]:
    return tuple(v for v in VERBS if v.frame in frames)


# ---------------------------------------------------------------- parse trees
@dataclass(frozen=True)
class NounPhrase:
    noun: Noun
    plural: bool
    det: str  # "def", "indef" (singular) or "bare" (plural, no article)
    adjectives: tuple[Adjective, ...] = ()


@dataclass(frozen=True)
class Pronoun:
    en: str
    de: str
    person: str


@dataclass(frozen=True)
class Coordinated:
    left: NounPhrase
    right: NounPhrase


@dataclass(frozen=True)
class PrepPhrase:
    prep: str  # English preposition, a key of PREPS
    np: NounPhrase


@dataclass(frozen=True)
class Clause:
    subject: NounPhrase | Pronoun | Coordinated
    verb: Verb | None  # None: the copula "be" with `predicate`
    obj: NounPhrase | None = None  # accusative object, or the dative one of "dat" verbs
    iobj: NounPhrase | None = None  # dative object of "ditr" verbs ("to the woman")
    predicate: Adjective | PrepPhrase | None = None
    pp: PrepPhrase | None = None
    modal: str | None = None
    negated: bool = False


def person_of(subject: NounPhrase | Pronoun | Coordinated) -> str:
    if isinstance(subject, Pronoun):
        return subject.person
    if isinstance(subject, Coordinated) or subject.plural:
        return "pl"
    return "3sg"


# ---------------------------------------------------------------- rendering
class Atoms:
    """Hands out fresh atom ids within one sentence."""

    def __init__(self) -> None:
        self.count = 0

    def new(self) -> int:
        self.count += 1
        return self.count


def render_np(np, case: str, atoms: Atoms, neg: int | None = None):
    """English and German tokens of a noun phrase in `case`; `neg` turns ein into kein."""
    if isinstance(np, Pronoun):
        a = atoms.new()
        return [(np.en, (a,))], [(np.de, (a,))]
    if isinstance(np, Coordinated):
        left_en, left_de = render_np(np.left, case, atoms)
        a = atoms.new()
        right_en, right_de = render_np(np.right, case, atoms)
        return left_en + [("and", (a,))] + right_en, left_de + [("und", (a,))] + right_de
    c = CASES.index(case)
    key = "pl" if np.plural else np.noun.gender
    en: list[Tok] = []
    de: list[Tok] = []
    if np.det == "def":
        a = atoms.new()
        en.append(("the", (a,)))
        de.append((DEFINITE[key][c], (a,)))
        ending = WEAK[key][c]
    elif neg is not None:  # "not ... a dog" / "not ... dogs" -> "keinen Hund" / "keine Hunde"
        if np.det == "indef":
            a = atoms.new()
            en.append(("a", (a,)))
            de.append((NEGATIVE[key][c], (a, neg)))
        else:
            de.append((NEGATIVE[key][c], (neg,)))
        ending = MIXED[key][c]
    elif np.det == "indef":
        a = atoms.new()
        en.append(("a", (a,)))
        de.append((INDEFINITE[key][c], (a,)))
        ending = MIXED[key][c]
    else:
        ending = STRONG_PLURAL[c]
    for adj in np.adjectives:
        a = atoms.new()
        en.append((adj.en, (a,)))
        de.append((adj.german(ending), (a,)))
    a = atoms.new()
    en.append((np.noun.en_pl if np.plural else np.noun.en, (a,)))
    de.append((np.noun.german(np.plural, case), (a,)))
    if en and en[0][0] == "a" and len(en) > 1 and en[1][0][0] in "aeiou":
        en[0] = ("an", en[0][1])
    return en, de


def render_pp(pp: PrepPhrase, atoms: Atoms) -> tuple[list[Tok], list[Tok]]:
    a = atoms.new()
    de_prep, case = PREPS[pp.prep]
    np_en, np_de = render_np(pp.np, case, atoms)
    if de_prep == "in" and np_de[0][0] == "dem":  # in + dem -> im
        return [(pp.prep, (a,))] + np_en, [("im", (a,) + np_de[0][1])] + np_de[1:]
    return [(pp.prep, (a,))] + np_en, [(de_prep, (a,))] + np_de


def render_predicate(pred, atoms: Atoms) -> tuple[list[Tok], list[Tok]]:
    if isinstance(pred, PrepPhrase):
        return render_pp(pred, atoms)
    a = atoms.new()
    return [(pred.en, (a,))], [(pred.de, (a,))]


def render_clause(c: Clause, order: str, atoms: Atoms) -> tuple[list[Tok], list[Tok]]:
    """Render a clause; `order` is the German word order.

    main: subject, finite verb, middle field, end ("der Mann liest das Buch")
    inv: finite verb first, after a fronted adverb or clause ("... liest der Mann das Buch")
    sub: verb-final ("... der Mann das Buch liest"); q: a yes/no question on both sides.
    """
    person = person_of(c.subject)
    p = {"1sg": 0, "3sg": 1, "pl": 2}[person]
    subj_en, subj_de = render_np(c.subject, "nom", atoms)
    neg = atoms.new() if c.negated else None
    if c.verb is None:  # copula
        v = atoms.new()
        en_be, de_be = BE[person]
        pred_en, pred_de = render_predicate(c.predicate, atoms)
        not_en = [("not", (neg,))] if neg else []
        nicht = [("nicht", (neg,))] if neg else []
        if order == "q":
            return [(en_be, (v,))] + subj_en + pred_en, [(de_be, (v,))] + subj_de + pred_de
        en = subj_en + [(en_be, (v,))] + not_en + pred_en
        finite = [(de_be, (v,))]
        return en, _german_order(order, subj_de, finite, [], nicht, [], pred_de)

    verb = c.verb
    v = atoms.new()
    m = atoms.new() if c.modal else None
    part = atoms.new() if verb.particle else None
    vp = (v, part) if part else (v,)  # a joined German verb expresses both words
    base = [(verb.en, (v,))] + ([(verb.particle, (part,))] if part else [])

    # English verb group: auxiliaries, negation, verb (and particle)
    if c.modal == "want":
        if order == "q":
            aux, rest = [(DO[person], (m,))], [("want", (m,)), ("to", (v,))] + base
        elif neg:
            aux, rest = [], [(DO[person], (m,)), ("not", (neg,)), ("want", (m,)), ("to", (v,))]
            rest += base
        else:
            aux, rest = [], [(MODALS["want"][0][p], (m,)), ("to", (v,))] + base
    elif c.modal:
        word = "cannot" if neg and c.modal == "can" else MODALS[c.modal][0][p]
        atoms_of_modal = (m, neg) if neg else (m,)
        if order == "q":
            aux, rest = [(word, atoms_of_modal)], base
        else:
            aux, rest = [], [(word, atoms_of_modal)] + base
    elif order == "q":
        aux, rest = [(DO[person], (v,))], base
    elif neg:
        aux, rest = [], [(DO[person], (v,)), ("not", (neg,))] + base
    else:
        verb_en = verb.en_3sg if person == "3sg" else verb.en
        aux, rest = [], [(verb_en, (v,))] + ([(verb.particle, (part,))] if part else [])

    # complements; kein replaces nicht when the negated object is indefinite
    target = c.obj
    use_kein = neg is not None and target is not None and target.det in ("indef", "bare")
    comp_en: list[Tok] = []
    middle: list[Tok] = []
    if verb.frame == "ditr":
        obj_en, obj_de = render_np(c.obj, "acc", atoms, neg if use_kein else None)
        iobj_en, iobj_de = render_np(c.iobj, "dat", atoms)
        to = ("to", iobj_de[0][1])  # "to" aligns with the dative article (or first word)
        comp_en, middle = obj_en + [to] + iobj_en, iobj_de + obj_de
    elif verb.frame in ("acc", "dat"):
        comp_en, middle = render_np(c.obj, verb.frame, atoms, neg if use_kein else None)
    pp_en, pp_de = render_pp(c.pp, atoms) if c.pp else ([], [])
    nicht = [("nicht", (neg,))] if neg and not use_kein else []

    # German verb positions
    if c.modal:
        finite = [(MODALS[c.modal][1][p], (m,))]
        end = [(verb.infinitive, vp)]
    elif verb.prefix and order != "sub":
        finite = [(verb.german(person), (v,))]
        end = [(verb.prefix, (part,) if part else (v,))]
    else:
        finite = [((verb.prefix or "") + verb.german(person), vp)]
        end = []
    if order == "q":
        en = aux + subj_en + rest + comp_en + pp_en
        return en, finite + subj_de + middle + pp_de + end
    en = subj_en + rest + comp_en + pp_en
    return en, _german_order(order, subj_de, finite, middle, nicht, pp_de, end)


def _german_order(order, subj, finite, middle, nicht, pp, end) -> list[Tok]:
    if order == "main":
        return subj + finite + middle + nicht + pp + end
    if order == "inv":
        return finite + subj + middle + nicht + pp + end
    if order == "sub":
        return subj + middle + nicht + pp + end + finite
    raise ValueError(f"`order` must be main, inv, sub or q; got {order!r}")


# ---------------------------------------------------------------- sampling
@dataclass(frozen=True)
class Style:
    """How rich the sampled clauses are."""

    p_adj: float = 0.25
    p_two_adj: float = 0.08  # of the NPs that have an adjective
    p_plural: float = 0.3
    p_pp: float = 0.2
    p_modal: float = 0.15
    p_neg: float = 0.15
    p_pronoun: float = 0.15
    p_coord: float = 0.04
    p_copula: float = 0.1


PLAIN = Style()
SHORT = Style(p_adj=0.12, p_two_adj=0.0, p_pp=0.08, p_coord=0.0)  # clauses inside a sentence
RICH = Style(p_adj=0.5, p_two_adj=0.2, p_pp=0.5, p_modal=0.25, p_coord=0.1)  # longer.tsv


def sample_np(
    rng: random.Random, kinds: tuple[str, ...], style: Style, det: str | None = None
) -> NounPhrase:
    noun = rng.choice(nouns_of(kinds))
    plural = rng.random() < style.p_plural
    if det is None:
        det = "def" if rng.random() < 0.6 else ("bare" if plural else "indef")
    adjs: tuple[Adjective, ...] = ()
    if rng.random() < style.p_adj:
        fitting = adjectives_for(noun.kind, noun.en)
        first = rng.choice(fitting)
        adjs = (first,)
        if rng.random() < style.p_two_adj:  # never "big small" or "old young"
            others = [a for a in fitting if _group(a) != _group(first)]
            adjs = tuple(sorted((first, rng.choice(others)), key=ADJECTIVES.index))
    return NounPhrase(noun, plural, det, adjs)


_SCALES = {"big": "size", "small": "size", "old": "age", "young": "age", "new": "age"}


def _group(adj: Adjective) -> str:
    """Adjectives on one scale never stack ("big small dog")."""
    return _SCALES.get(adj.en, adj.en)


def sample_subject(rng: random.Random, kinds: tuple[str, ...], style: Style, coord: bool):
    if "person" in kinds and rng.random() < style.p_pronoun:
        return Pronoun(*rng.choice(PRONOUNS))
    if coord and rng.random() < style.p_coord:
        left = sample_np(rng, kinds, style, det="def")
        right = sample_np(rng, (left.noun.kind,), style, det="def")
        if left.noun != right.noun:
            return Coordinated(left, right)
    return sample_np(rng, kinds, style)


def sample_clause(
    rng: random.Random,
    style: Style,
    question: bool = False,
    coord: bool = True,
    frames: tuple[str, ...] = ("intr", "acc", "dat", "ditr"),
):
    """A random clause; questions have no negation and no "must"."""
    negated = not question and rng.random() < style.p_neg
    if "acc" in frames and rng.random() < style.p_copula:
        subject = sample_subject(rng, ("person", "animal", "food", "text", "thing"), style, coord)
        kind = (
            "person"
            if isinstance(subject, Pronoun)
            else (subject.left.noun.kind if isinstance(subject, Coordinated) else subject.noun.kind)
        )
        if kind != "place" and rng.random() < 0.35:
            predicate = PrepPhrase("in", sample_np(rng, ("place",), style, det="def"))
        else:
            predicate = rng.choice(adjectives_for(kind))
        return Clause(subject, None, predicate=predicate, negated=negated)
    verb = rng.choice(verbs_of(frames))
    subject = sample_subject(rng, verb.subjects, style, coord)
    obj = iobj = pp = None
    if verb.frame in ("acc", "dat", "ditr"):
        obj = sample_np(rng, verb.objects, style)
    if verb.frame == "ditr":
        iobj = sample_np(rng, ("person", "animal"), style)
    if rng.random() < style.p_pp:
        prep = rng.choice(
            ["with", "without", "in", "for"] if verb.takes_for else ["with", "without", "in"]
        )
        objects_are_places = obj is not None and obj.noun.kind == "place"
        if prep == "in" and not objects_are_places:
            pp = PrepPhrase("in", sample_np(rng, ("place",), style))
        elif prep != "in":
            pp = PrepPhrase(prep, sample_np(rng, ("person", "animal"), style))
    modal = None
    if rng.random() < style.p_modal:
        modal = rng.choice(("want", "can") if question or negated else ("want", "can", "must"))
    return Clause(subject, verb, obj, iobj, pp=pp, modal=modal, negated=negated)


def sample_sentence(
    rng: random.Random, atoms: Atoms, style: Style = PLAIN, inner: Style = SHORT
) -> tuple[list[Tok], list[Tok]]:
    """One sentence pair of a randomly chosen construction."""
    kind = rng.choices(
        ("simple", "adverb", "question", "sub", "that", "when", "coord"),
        weights=(34, 14, 8, 16, 6, 10, 8),
    )[0]
    end = [(".", (atoms.new(),))]
    if kind == "simple":
        en, de = render_clause(sample_clause(rng, style), "main", atoms)
    elif kind == "adverb":
        a = atoms.new()
        adv_en, adv_de = rng.choice(ADVERBS)
        en, de = render_clause(sample_clause(rng, style), "inv", atoms)
        en, de = [(adv_en, (a,))] + en, [(adv_de, (a,))] + de
    elif kind == "question":
        en, de = render_clause(sample_clause(rng, style, question=True), "q", atoms)
        end = [("?", end[0][1])]
    elif kind in ("sub", "that"):
        if kind == "that":
            first = sample_clause(rng, inner, coord=False, frames=("that",))
            first = Clause(first.subject, first.verb)
            conj = "that"
        else:
            first = sample_clause(rng, inner, coord=False)
            conj = rng.choice(("because", "although", "when"))
        en1, de1 = render_clause(first, "main", atoms)
        a = atoms.new()
        en2, de2 = render_clause(sample_clause(rng, inner, coord=False), "sub", atoms)
        en = en1 + [(conj, (a,))] + en2
        de = de1 + [(",", ())] + [(SUBORDINATORS[conj], (a,))] + de2
    elif kind == "when":  # "When the dog sleeps, the man reads." -> "Wenn ..., liest der Mann."
        a, comma = atoms.new(), atoms.new()
        en1, de1 = render_clause(sample_clause(rng, inner, coord=False), "sub", atoms)
        en2, de2 = render_clause(sample_clause(rng, inner, coord=False), "inv", atoms)
        en = [("when", (a,))] + en1 + [(",", (comma,))] + en2
        de = [("wenn", (a,))] + de1 + [(",", (comma,))] + de2
    else:  # coordination: "and" -> "und", "but" -> ", aber" (no reordering)
        a = atoms.new()
        en1, de1 = render_clause(sample_clause(rng, inner, coord=False), "main", atoms)
        en2, de2 = render_clause(sample_clause(rng, inner, coord=False), "main", atoms)
        if rng.random() < 0.5:
            en, de = en1 + [("and", (a,))] + en2, de1 + [("und", (a,))] + de2
        else:
            en, de = en1 + [("but", (a,))] + en2, de1 + [(",", ()), ("aber", (a,))] + de2
    return en + end, de + end


# ---------------------------------------------------------------- output
def _join(words: list[str]) -> str:
    """Words back to text; the inverse of transformer_lib.data.tokenize on this corpus."""
    text = ""
    for w in words:
        text += w if w in ",.?" else (" " if text else "") + w
    return text


def _alignment(en: list[Tok], de: list[Tok]) -> str:
    """Pharaoh pairs ``i-j`` (sorted) for every English/German token sharing an atom."""
    where: dict[int, list[int]] = {}
    for j, (_, atoms) in enumerate(de):
        for a in atoms:
            where.setdefault(a, []).append(j)
    pairs = (
        f"{i}-{j}"
        for i, (_, atoms) in enumerate(en)
        for j in sorted({j for a in atoms for j in where.get(a, ())})
    )
    return " ".join(pairs)


def sample_pairs(
    rng: random.Random,
    n: int,
    seen_en: dict[str, str],
    seen_de: dict[str, str],
    min_len: int,
    max_len: int,
    style: Style = PLAIN,
    inner: Style = SHORT,
) -> list[str]:
    """`n` new tsv lines whose sides have min_len..max_len tokens, unseen on either side."""
    lines: list[str] = []
    while len(lines) < n:
        en, de = sample_sentence(rng, Atoms(), style, inner)
        if not (min_len <= len(en) <= max_len and min_len <= len(de) <= max_len):
            continue
        en_text, de_text = _join([w for w, _ in en]), _join([w for w, _ in de])
        if en_text in seen_en:
            continue
        if de_text in seen_de:  # two English sentences, one German one: a grammar bug
            raise RuntimeError(f"{en_text!r} and {seen_de[de_text]!r} -> {de_text!r}")
        seen_en[en_text], seen_de[de_text] = de_text, en_text
        lines.append(f"{en_text}\t{de_text}\t{_alignment(en, de)}\n")
    return lines


def generate(out_dir: str | Path, seed: int = SEED) -> dict[str, str]:
    """Write the four .tsv files and SHA256SUMS into `out_dir`; return {file: sha256}."""
    rng = random.Random(seed)
    seen_en: dict[str, str] = {}
    seen_de: dict[str, str] = {}
    total = sum(SIZES.values())
    lines = sample_pairs(rng, total, seen_en, seen_de, MIN_LEN, MAX_LEN)
    splits, start = {}, 0
    for name, size in SIZES.items():
        splits[name] = lines[start : start + size]
        start += size
    # every side of train/valid/test has <= MAX_LEN tokens, so these are all longer
    splits["longer"] = sample_pairs(
        rng, N_LONGER, seen_en, seen_de, MAX_LEN + 1, 10 * MAX_LEN, style=RICH, inner=RICH
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sums: dict[str, str] = {}
    for name, split_lines in splits.items():
        data = "".join(split_lines).encode("utf-8")
        (out / f"{name}.tsv").write_bytes(data)
        sums[f"{name}.tsv"] = hashlib.sha256(data).hexdigest()
    text = "".join(f"{digest}  {name}\n" for name, digest in sorted(sums.items()))
    (out / "SHA256SUMS").write_bytes(text.encode("ascii"))
    return sums


def check(data_dir: str | Path) -> list[str]:
    """Regenerate into a temp dir; return the names of files in `data_dir` that differ."""
    data_dir = Path(data_dir)
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp)
        return [
            name
            for name in (*FILES, "SHA256SUMS")
            if not (data_dir / name).exists()
            or (data_dir / name).read_bytes() != (Path(tmp) / name).read_bytes()
        ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=BUNDLED,
        help="output folder (default: transformer_lib/data/bundled/)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="regenerate in a temp dir and compare with the files in --out",
    )
    args = parser.parse_args(argv)
    if args.check:
        differ = check(args.out)
        print("differ: " + ", ".join(differ) if differ else "all files match")
        return 1 if differ else 0
    for name, digest in generate(args.out).items():
        print(f"{digest}  {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
