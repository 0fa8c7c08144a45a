"""What a question asks for, and whether a sentence holds one (no LLM).

"How long was tally-api down?" asks for a duration, "When ..." for a time, "Which
version ..." for a version, "How many ..." for a number, "Who ..." for a person,
"Where ..." for a place, "What is the name of ..." for a name. The sentence that
answers holds a value of that kind that the question does not already hold ("47
minutes", "2.7.4", "Pixel"); a sentence that only repeats the question's words, however
many of them, holds none. ``asked`` reads the kind from the question's wording,
``holds`` whether a sentence gives one: plain patterns over English text, each true of
any memory, not of one data set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memgrove.tree.text.dates import MONTHS, days_named
from memgrove.tree.hygiene.statement_values import names_nothing

DURATION, TIME, VERSION, NUMBER, FREQUENCY, PERSON, PLACE, NAME, BREED, TITLE, DEFAULT, COMMAND, IDENTIFIER, YES_NO = (
    "duration", "time", "version", "number", "frequency", "person", "place", "name", "breed", "title", "default",
    "command", "identifier", "yes/no")

# -- what the question asks -------------------------------------------------------

# the kinds answered in code (a command, a setting's name): asked of a text without code, a
# question worded so ("What class is Sam taking?") asks for something else
IN_CODE = frozenset({"command", "identifier"})

_UNIT = r"(?:second|sec|minute|min|hour|hr|day|night|week|weekend|month|year|decade)s?"
# first match wins: "how long ago" asks when, "how many minutes" how long, "how many pods" a number
_AUX = r"(?:is|are|was|were|do|does|did|can|could|should|would|will|must|may|has|have|had|isn't|aren't|doesn't|don't)"
_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "Should Poetry be installed into the project's environment?", "When I run it in a project,
    # are its dependencies installed?": answered by a statement that says yes or no
    # ("Can you list ...?", "Could you walk me through ...?" ask for something, not yes or no)
    (YES_NO, re.compile(rf"^\W*(?!(?:can|could|would|will)\s+you\b){_AUX}\s+(?!.*\b(?:or)\b)"
                        rf"|^\W*(?:when|if)\b[^?,]*,\s*{_AUX}\s", re.I)),
    # a setting's default is what documentation states as "Default: `30`" or "defaults to 16K",
    # whatever kind of value it is ("How long does it wait by default?" is answered by "Default: 500")
    (DEFAULT, re.compile(r"\bby default\b|^\W*(?:what|which|how)\b.*\bdefaults?\b", re.I)),
    (TIME, re.compile(r"\bhow long ago\b|^\W*when\b(?![^?]*,\s*(?:which|what|who|where|how)\b)|\bsince when\b|\b(?:what|which|at what|by what)\s+"
                      r"(?:year|month|day|date|week|time|weekday|season)\b|\bwhen\s+(?:did|does|do|is|was|will|are|were)\b",
                      re.I)),
    (DURATION, re.compile(rf"\bhow long\b|\bfor how long\b|\bhow many\s+{_UNIT}\b|\b(?:what|which)\s+(?:duration|period)\b",
                          re.I)),
    (FREQUENCY, re.compile(r"\bhow often\b|\bhow frequently\b|\bhow many times\b", re.I)),
    (VERSION, re.compile(r"\b(?:what|which)\s+(?:\w+\s+)?(?:version|release)\b|\b(?:what|which)\s+(?:is|was|are|were)\s+the\s+(?:\w+\s+)?version of\b", re.I)),
    (NUMBER, re.compile(r"\bhow (?:many|much|big|large|old|far|fast|high|tall)\b|\b(?:maximum|minimum|max|min)\s+"
                        r"(?:\w+\s+)?(?:length|size|number|count|value|age|depth|width|height)\b|\b(?:what|which)\s+(?:\w+\s+)?"
                        r"(?:number|percentage|percent|price|cost|size|amount|count|total|rate|limit|port|score|age)\b",
                        re.I)),
    (BREED, re.compile(r"\bwhat\s+(?:breed|kind of (?:dog|cat|horse)|type of (?:dog|cat|horse))\b|\bbreed\b", re.I)),
    (NAME, re.compile(r"\bwhat(?:'s| is| was| are| were)\s+(?:the\s+)?(?:\w+\s+)?names?\b|\bname of\b"
                      r"|\bwhat (?:is|was|are|were) (?:\w+\s+){1,3}(?:called|named)\b|\bnamed what\b", re.I)),
    # what a user does, in documentation: answered by a command or a flag as written in code
    # ("How do I install it with pipx?", "Which flag ...?")
    (COMMAND, re.compile(r"^\W*how (?:do|can|should|would) (?:i|we|you)\b|^\W*how to\b|\b(?:what|which)\s+"
                         r"(?:\w+\s+)?(?:command|flag|option|switch|argument|subcommand|shebang)s?\b", re.I)),
    # what a user sets or names: a setting, a variable, a field, in code ("`UV_TOOL_BIN_DIR`")
    (IDENTIFIER, re.compile(r"\b(?:what|which)\s+(?:\w+\s+)?(?:setting|variable|field|key|parameter|table|"
                            r"section|extra|entry point|attribute|property|module|class|function|method)s?\b", re.I)),
    (TITLE, re.compile(r"\b(?:what|which)\s+(?:\w+\s+)?(?:book|novel|movie|film|show|series|song|album|game|band|"
                       r"podcast|play|musical|poem|painting|app)s?\b", re.I)),
    (PERSON, re.compile(r"^\W*(?:who|whom|whose)\b|\b(?:with|by|for|to|from) whom\b|\bwho\s+(?:is|was|did|does|do|"
                        r"will|has|had|are|were|can|should)\b|\b(?:which|what)\s+(?:person|people|friend|colleague|"
                        r"teammate|member|engineer|developer|owner)\b", re.I)),
    (PLACE, re.compile(r"^\W*where\b|\bwhere\s+(?:is|was|are|were|did|does|do|will|can|should|has|had)\b"
                       r"|\b(?:what|which|in what|in which)\s+(?:city|country|state|town|place|region|area|"
                       r"neighbou?rhood|restaurant|cafe|venue|park|location|folder|directory|file|path|host|"
                       r"server|region|continent|island)\b", re.I)),
)


def asked(question: str) -> str | None:
    """The kind of value ``question`` asks for (``YES_NO``, ``DEFAULT``, ``COMMAND``, ``IDENTIFIER``, ``DURATION``, ``TIME``, ``VERSION``, ``NUMBER``,
    ``FREQUENCY``, ``PERSON``, ``PLACE``, ``NAME``, ``BREED``, ``TITLE``), or None when its wording names none
    ("What did we decide about search?")."""
    for kind, pattern in _ASKS:
        if pattern.search(question):
            return kind
    return None


# the words that ask for the kind (answered by the value, not repeated by it): "long" of "how long"
_ASKING_WORDS = {
    DURATION: "long many duration period", TIME: "when year month day date week time long ago weekday season",
    VERSION: "version release", NUMBER: "many much number percentage percent price cost size amount count total maximum "
                                        "minimum max min",
    FREQUENCY: "often frequently many times", DEFAULT: "default defaults value",
    COMMAND: "command commands flag flags option options switch argument", PERSON: "who whom whose person people", PLACE: "where place location",
    NAME: "name names named called", BREED: "breed kind type", TITLE: "",
}


def asking_words(kind: str | None) -> frozenset[str]:
    """The words of a question that ask for ``kind`` ("how long", "which version"): a sentence
    that holds the value does not repeat them, so they are no words to match."""
    return frozenset(_ASKING_WORDS.get(kind or "", "").split())


# -- what a sentence holds ----------------------------------------------------------

_NUMBER_WORDS = ("a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
                 "forty|fifty|sixty|hundred|few|several|couple of|a couple of|half an?|a half|many|\\d+(?:[.,]\\d+)?")
_DURATION = re.compile(rf"\b(?:{_NUMBER_WORDS})[\s-]+(?:more\s+|full\s+|whole\s+)?{_UNIT}\b"
                       r"|\bfrom\s+\d{1,2}[:.]\d{2}\s+to\s+\d{1,2}[:.]\d{2}\b|\b\d+\s*(?:ms|s|h|min|d)\b"
                       r"|\b(?:all|the whole)\s+(?:day|night|week|month|year|weekend)\b", re.I)
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DAYS = frozenset(d + "day" for d in "mon tues wednes thurs fri satur sun".split())
_MONTH_NAMES = "|".join(sorted((m for m in MONTHS if len(m) > 3 or m == "may"), key=len, reverse=True))
_TIME = re.compile(rf"\b(?:yesterday|today|tonight|tomorrow|this morning|this evening|last night|ago|"
                   rf"(?:last|next|this|past|coming)\s+(?:week|weekend|month|year|summer|winter|spring|fall|autumn|"
                   rf"{_WEEKDAY})|{_WEEKDAY}s?|(?:19|20)\d\d|\d{{1,2}}:\d\d|\d{{1,2}}\s*(?:am|pm)|"
                   rf"(?:in|since|by|until|on|early|late|mid)[\s-]+(?:{_MONTH_NAMES})|noon|midnight)\b", re.I)
_MONTH_CAP = re.compile(r"\b(?:" + "|".join(m.capitalize() for m in MONTHS if len(m) > 3) + r")\b")
_VERSION = re.compile(r"\bv\d+(?:\.\d+)*\b|\b\d+\.\d+(?:\.\d+)+\b|\b\d+\.\d+\b(?!\s*%)|\bversion\s+\d+\b", re.I)
# a number stands alone: the digits of a name ("INC-231", "SHA-256", "v2") count nothing
_NUMBER = re.compile(rf"(?<![\w-])\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                     rf"forty|fifty|hundred|thousand|million|billion|dozen|half|once|twice|a couple|a few|several)\b",
                     re.I)
_DATE_LIKE = re.compile(rf"\b(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
                        rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH_NAMES})\b(?:,?\s+\d{{4}})?"
                        r"|\b(?:19|20)\d\d\b|\b\d{1,2}:\d\d\b|\bv?\d+\.\d+\.\d+\b", re.I)
_SPAN = re.compile(r"\bbetween\b.+\band\b|\b(?:since|until|after|before)\b|\bfrom\b.+\bto\b", re.I)
_HOW_MANY = re.compile(r"\bhow many\s+(\w+)(?:\s+(\w+))?", re.I)
_STOP = frozenset("of do does did are is were was have has had will would can people times".split())
_COUNT = re.compile(r"\b(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                    r"forty|fifty|hundred|dozen|several|a few|a couple of)\b", re.I)
COUNTED_WITHIN = 4   # "12 pods", "twelve of the pods", "3 Kubernetes worker pods"
_FREQUENCY = re.compile(rf"\b(?:every|each|per|daily|nightly|weekly|monthly|yearly|annually|hourly|once|twice|"
                        rf"always|usually|often|rarely|never|\w+\s+times)\b|\ba\s+(?:day|week|month|year)\b", re.I)
# who a sentence names beyond a proper name: the people of anyone's life and work
_PEOPLE = re.compile(r"\b(?:mom|mum|dad|mother|father|parents?|sister|brother|siblings?|wife|husband|partner|"
                     r"girlfriend|boyfriend|fianc[eé]e?|friends?|son|daughter|kids?|children|grand(?:ma|pa|mother|"
                     r"father|parents?)|aunt|uncle|cousin|boss|manager|colleague|coworker|co-worker|teammate|team|"
                     r"teacher|mentor|coach|neighbou?r|doctor|therapist)\b", re.I)
_LOCATIVE = re.compile(r"\b(?:in|at|to|from|near|under|inside|into|on|around|visit(?:ed|ing)?|via|behind)\s+"
                       r"(?:the\s+)?([A-Z][\w'.-]*|`[^`]+`|\w+://[^\s,;)]+|[\w.-]+/[\w./-]*)")
# a statement that says yes or no: a negation, a modal, what is allowed or required
_POLARITY = re.compile(r"\b(?:not|no|never|none|cannot|can't|won't|don't|doesn't|isn't|aren't|only|must|should|"
                       r"always|required|requires|optional|safe|unsafe|supported|unsupported|allowed|possible|"
                       r"impossible|yes|recommended|deprecated|ignored|precedence|priority|wins|instead)\b|n't\b", re.I)
# a path written in code: `~/.cache/uv`, `/etc/uv`, `{cache-dir}/virtualenvs`, `%LOCALAPPDATA%\uv`, `Scripts/`
_PATH = re.compile(r"`((?:~|\.{1,2}|\$\w+|%\w+%|\{[\w-]+\}|[\w.-]+)?[/\\][^`\s]*|[\w.-]+/)`")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_PATH_IN_CODE = re.compile(r"(?:^|[\s>=])((?:~|\$\w+|%\w+%|\{[\w-]+\})?/[\w.{}$%*-]+(?:/[\w.{}$%*-]*)+)")
# a command, a flag or a setting as documentation writes it: in code, with a space or as a flag
_COMMAND = re.compile(r"\s|^-{1,2}\w|^[\w.-]+\s*=")     # inside a code span: a space, a flag, a setting
_BY_DEFAULT = re.compile(r"\b(?:by default|defaults?)\b", re.I)
# a default as documentation states it: "**Default:** `30`", "Defaults to `'SIGUSR2'`", "defaults to 16K",
# "the default is 8", "(default)" after a value
_DEFAULT_VALUE = re.compile(r"\bdefaults?\b(?:\s+(?!is\b|to\b|of\b)[\w-]+){0,2}?\**\s*(?:is|to|:|of|=)?\**\s*[:=]?\s*\**\s*"
                            r"(`[^`]+`|'[^']+'|\"[^\"]+\"|[\w.+-]*\d[\w.+-]*|true|false|null|none|on|off|enabled|disabled"
                            r"|\[[^\]]+\]|\{[^}]+\})"
                            r"|(`[^`]+`|(?<![\w.+-])[\w.+-]*?\d[\w.+-]*)\s*(?:\((?:the\s+)?default\)|is the default\b)", re.I)
# a breed is said by the words breeds are named with (the head of "border collie mix", "golden retriever")
_BREED = re.compile(r"\b(?:mix|mixed|mutt|breed|purebred|retriever|terrier|shepherd|collie|poodle|\w+doodle|spaniel|"
                    r"bulldog|labrador|husky|corgi|beagle|dachshund|pug|chihuahua|rottweiler|greyhound|hound|"
                    r"schnauzer|pointer|setter|mastiff|shih tzu|maltese|tabby|siamese|persian|ragdoll|sphynx|"
                    r"maine coon|shorthair|longhair|thoroughbred|pony)\b", re.I)
_NAMED_PLACE = re.compile(r"\b(?:city|country|state|town|region|continent|island|neighbou?rhood)\b", re.I)
_QUOTED = re.compile(r"[\"“«]([^\"”»]{2,80})[\"”»]")
_TOKEN = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
_DETERMINERS = frozenset("the a an my our your his her their its this that".split())
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# a sentence that starts with who did something: "Karim reviewed it", "Priya owns billing"
_DOER = re.compile(r"(?:^|(?<=[.!?]\s))([A-Z][a-z]+)\s+(?:is|was|has|had|will|did|does|can|said|says|told|asked|"
                   r"[a-z]+ed|owns|leads|runs|covers|manages|handles|maintains|approves|reviews|decides)\b")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|me|my|mine|we|we're|we've|we'll|us|our)\b")


def _not_a_name(tok: str) -> bool:
    """A capitalized word that names nobody: a month, a weekday, "I'm", a greeting."""
    low = tok.lower()
    return low in MONTHS or low in _DAYS or low.startswith(("i'", "i’")) or names_nothing(re.sub(r"['’]", "", tok))


def _names(text: str, proper: frozenset[str] = frozenset()) -> list[str]:
    """The proper names ``text`` gives: capitalized words (not months, weekdays or words
    capitalized for other reasons), a sentence's first word only when ``proper`` knows it as a
    name or it is the whole sentence but one word (a reply that is a name: "Pixel.")."""
    out = []
    for sentence in _SENTENCE_END.split(text):
        toks = _TOKEN.findall(sentence)
        for i, tok in enumerate(toks):
            if not tok[:1].isupper() or _not_a_name(tok):
                continue
            if i == 0 and tok not in proper and len(toks) > 2:
                continue
            if 0 < i < len(toks) - 1 and toks[i - 1].lower() in _DETERMINERS and toks[i + 1][:1].islower():
                continue   # "the Riverside shelter", "my Sony headphones": it names the thing after it
            out.append(tok)
    return out


def names_in(texts: Iterable[str]) -> frozenset[str]:
    """The words ``texts`` write capitalized in the middle of a sentence: names, when a
    sentence starts with one ("Pixel says hi")."""
    out: set[str] = set()
    for text in texts:
        for sentence in _SENTENCE_END.split(text):
            toks = _TOKEN.findall(sentence)
            out.update(t for t in toks[1:] if t[:1].isupper() and not _not_a_name(t))
    return frozenset(out)


def _new(found: list[str], question: str) -> bool:
    """Is one of ``found`` not already in the question?"""
    q = question.lower()
    return any(f.strip().lower() not in q for f in found if f.strip())


def holds(kind: str | None, sentence: str, question: str, *, speaker: str = "",
          proper: frozenset[str] = frozenset()) -> bool:
    """Does ``sentence`` give a value of ``kind`` that ``question`` does not already name?

    ``speaker``: who said it, when it is a conversation's message: "I'll cover your shifts"
    names a person, its speaker, for "Who covers Ana's shifts?". ``proper``: the words known
    as names (``names_in`` the question and the chosen entries), so a name that starts a
    sentence ("Pixel says hi") counts.
    """
    if kind is None:
        return False
    if kind == DURATION:
        if _new([m.group(0) for m in _DURATION.finditer(sentence)], question):
            return True
        # "How many days passed between the meeting and the deadline?" is counted from their days
        return bool(_SPAN.search(question)) and holds(TIME, sentence, question)
    if kind == TIME:
        found = [m.group(0) for m in _TIME.finditer(sentence)] + [m.group(0) for m in _MONTH_CAP.finditer(sentence)]
        return bool(days_named(sentence)) or _new(found, question)
    if kind == VERSION:
        return _new([m.group(0) for m in _VERSION.finditer(sentence)], question)
    if kind == NUMBER:
        counted = _HOW_MANY.search(question)
        nouns = [w.lower()[:4] for w in (counted.groups() if counted else ()) if w and w.lower() not in _STOP]
        if nouns:
            # "how many pods" is answered by a number of pods: "12 pods", "twelve of the pods"
            return any(w.lower().startswith(tuple(nouns))
                       for m in _COUNT.finditer(sentence) for w in _TOKEN.findall(sentence[m.end():])[:COUNTED_WITHIN])
        # a day, a year, a time of day or a version is no amount ("shipped Friday March 20, 2026")
        return _new([m.group(0) for m in _NUMBER.finditer(_DATE_LIKE.sub(" ", sentence))], question)
    if kind == FREQUENCY:
        return _new([m.group(0) for m in _FREQUENCY.finditer(sentence)], question)
    if kind == PERSON:
        if speaker and speaker.lower() not in question.lower() and _FIRST_PERSON.search(sentence):
            return True
        doers = [m.group(1) for m in _DOER.finditer(sentence) if not _not_a_name(m.group(1))]
        return _new(_names(sentence, proper) + doers + [m.group(0) for m in _PEOPLE.finditer(sentence)], question)
    if kind == PLACE:
        places = [m.group(1).strip("`") for m in _LOCATIVE.finditer(sentence)]
        # a path in code: "macOS: `~/Library/Caches/pypoetry`", "`poetry completions fish > ~/.config/fish/...`"
        places += [m.group(1) for m in _PATH.finditer(sentence)]
        places += [m.group(1) for span in _CODE_SPAN.finditer(sentence) for m in _PATH_IN_CODE.finditer(span.group(1))]
        if _NAMED_PLACE.search(question):
            places += _names(sentence, proper)   # "which city": a city is named
        return _new(places, question)
    if kind == TITLE:
        # a work is named by its title: in quotes, or capitalized
        return _new([m.group(1) for m in _QUOTED.finditer(sentence)] + _names(sentence, proper), question)
    if kind == NAME:
        return _new(_names(sentence, proper), question)
    if kind == YES_NO:
        return bool(_POLARITY.search(sentence))
    if kind == IDENTIFIER:
        return _new([m.group(1) for m in _CODE_SPAN.finditer(sentence)], question)
    if kind == COMMAND:
        return _new([m.group(1) for m in _CODE_SPAN.finditer(sentence) if _COMMAND.search(m.group(1))], question)
    if kind == DEFAULT:
        if _new([m.group(1) or m.group(2) for m in _DEFAULT_VALUE.finditer(sentence)], question):
            return True
        # "Where does uv create the environment by default?" is answered by a place too
        other = asked(_BY_DEFAULT.sub(" ", question))
        return other not in (None, DEFAULT) and holds(other, sentence, question, speaker=speaker, proper=proper)
    if kind == BREED:
        return _new([m.group(0) for m in _BREED.finditer(sentence)], question)
    return False


__all__ = ["BREED", "COMMAND", "DEFAULT", "IDENTIFIER", "IN_CODE", "YES_NO", "DURATION", "FREQUENCY", "NAME", "NUMBER", "PERSON", "PLACE", "TIME", "TITLE", "VERSION", "asked", "asking_words", "holds", "names_in"]
