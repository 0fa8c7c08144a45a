"""The seeded synthetic corpus of the scale and tier benchmarks, and their questions.

``Corpus(seed).op(i)`` is a pure function of (seed, i): entry i is the same in every run and every size, so
the 1,000-entry tree is a prefix of the 10,000-entry one. ``Questions`` makes seeded tier-2 questions (an
entry's rarest title words), their rewordings (tier 1), out-of-domain and vocabulary questions.
"""

from __future__ import annotations

import collections
import random
import re
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator


N_DOMAINS = 20
N_TOPICS = 25          # per domain
TOPIC_WORDS = 40       # words that are frequent within one topic
VOCAB = 30_000
ZIPF_S = 1.0
QUERY_MIN_RANK = 30    # query words skip the 30 most frequent (function-word-like) ones
_STOP = None


def _stop_words() -> frozenset[str]:
    global _STOP
    if _STOP is None:
        from memgrove.tree.index.whoosh_engine import STOP_WORDS
        _STOP = STOP_WORDS
    return _STOP


class Corpus:
    """A seeded vocabulary with Zipf-distributed word frequencies, 20 domains × 25 topics,
    each topic with its own 40 frequent words. ``op(i)`` is a pure function of (seed, i)."""

    ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
              "br", "cr", "dr", "fl", "gr", "pl", "pr", "st", "tr", "sh", "ch", "th"]
    VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou"]
    CODAS = ["", "", "", "n", "r", "l", "s", "m", "nd", "rt", "st", "x"]

    def __init__(self, seed: int):
        self.seed = seed
        rng = random.Random(f"memgrove-scale-vocab-{seed}")
        stop = _stop_words()
        words: list[str] = []
        seen: set[str] = set()
        while len(words) < VOCAB:
            w = "".join(rng.choice(self.ONSETS) + rng.choice(self.VOWELS) + rng.choice(self.CODAS)
                        for _ in range(rng.choice((1, 2, 2, 2, 3, 3, 4))))
            if len(w) < 3 or w in seen or w in stop:
                continue
            seen.add(w)
            words.append(w)
        # Zipf's law of abbreviation: the frequent words are the short ones
        ties = {w: rng.random() for w in words}
        words.sort(key=lambda w: (len(w), ties[w]))
        self.words = words
        cum, total = [], 0.0
        for r in range(VOCAB):
            total += 1.0 / (r + 1) ** ZIPF_S
            cum.append(total)
        self.cum = cum
        # query words: same Zipf law, without the most frequent ranks
        self.q_words = words[QUERY_MIN_RANK:]
        self.q_cum = [c - cum[QUERY_MIN_RANK - 1] for c in cum[QUERY_MIN_RANK:]]
        # domains and topics: distinct words (from the middle of the vocabulary)
        names = rng.sample(words[2000:12000], N_DOMAINS * (N_TOPICS + 1))
        self.domains = names[:N_DOMAINS]
        self.topics = [names[N_DOMAINS + d * N_TOPICS: N_DOMAINS + (d + 1) * N_TOPICS] for d in range(N_DOMAINS)]
        self.topic_words = [[rng.sample(words[200:], TOPIC_WORDS) for _ in range(N_TOPICS)] for _ in range(N_DOMAINS)]

    def zipf(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=k)

    def op(self, i: int) -> dict[str, Any]:
        rng = random.Random(f"memgrove-scale-entry-{self.seed}-{i}")
        d, t = rng.randrange(N_DOMAINS), rng.randrange(N_TOPICS)
        tw = self.topic_words[d][t]
        n_words = rng.randint(150, 400)
        # 85% global Zipf words, 15% the topic's own words
        tokens = [rng.choice(tw) if rng.random() < 0.15 else w for w in self.zipf(rng, n_words)]
        title_words = rng.sample(tw, rng.randint(1, 2))
        title_words += rng.choices(self.q_words, cum_weights=self.q_cum, k=rng.randint(3, 6) - len(title_words))
        rng.shuffle(title_words)
        title = " ".join(title_words).capitalize()
        # facts take ~15% of the words, the narrative the rest
        n_facts = rng.randint(2, 4)
        fact_len = max(5, n_words * 15 // 100 // n_facts)
        fact_tokens, narr_tokens = tokens[: n_facts * fact_len], tokens[n_facts * fact_len:]
        sentences, j = [], 0
        while j < len(narr_tokens):
            k = rng.randint(8, 20)
            s = narr_tokens[j:j + k]
            sentences.append(" ".join(s).capitalize() + ".")
            j += k
        paras, j = [], 0
        while j < len(sentences):
            k = rng.randint(3, 6)
            paras.append(" ".join(sentences[j:j + k]))
            j += k
        facts = []
        for f in range(n_facts):
            ft = fact_tokens[f * fact_len:(f + 1) * fact_len]
            facts.append(f"- **{ft[0]}**: {' '.join(ft[1:])} [fact]")
        content = "## Narrative\n" + "\n\n".join(paras) + "\n\n## Facts\n" + "\n".join(facts) + "\n"
        summary = " ".join(sentences[0].split()[:16]).rstrip(".") + "."
        tags = [self.domains[d]] + rng.sample(tw, rng.randint(1, 3))
        stem = "_".join(title_words[:4])[:60]
        path = f"{self.domains[d]}/{self.topics[d][t]}/{stem}_{i}.md"
        return {"op": "ADD", "path": path, "title": title, "summary": summary, "content": content,
                "tags": tags, "reason": f"scale benchmark synthetic entry {i}"}

    def query(self, rng: random.Random) -> str:
        """2-4 words: 1-2 words of a random topic plus Zipf words (ranks >= 30)."""
        d, t = rng.randrange(N_DOMAINS), rng.randrange(N_TOPICS)
        n = rng.randint(2, 4)
        k_topic = rng.randint(1, min(2, n))
        ws = rng.sample(self.topic_words[d][t], k_topic)
        ws += rng.choices(self.q_words, cum_weights=self.q_cum, k=n - k_topic)
        rng.shuffle(ws)
        return " ".join(ws)


def curate_batches(mem: Any, ops: Any, batch: int, label: str) -> dict[str, Any]:
    """Curate ``ops`` (a list, or :class:`LazyOps`) into ``mem`` in batches of ``batch`` ADDs, each checked added,
    with about ten progress lines: the build's numbers (seconds of the ``curate`` calls, ops/s, the first and last
    batch's ops/s, the median batch, and the seconds spent making the batches' ops, not timed)."""
    from harness.report import log
    from harness.stats import pct

    n, times, gen_s = len(ops), [], 0.0
    every = max(1, (n // batch) // 10)
    for i in range(0, n, batch):
        tg = time.perf_counter()
        chunk = [ops[j] for j in range(i, min(n, i + batch))]
        tb = time.perf_counter()
        gen_s += tb - tg
        res = mem.curate(chunk)
        times.append(time.perf_counter() - tb)
        assert len(res) == len(chunk) and all(r.status == "added" for r in res)
        if len(times) % every == 0 and i + batch < n:
            done = i + len(chunk)
            log(f"  {label} built {done}/{n} ({done / sum(times):.0f} ops/s, last batch "
                f"{len(chunk) / times[-1]:.0f} ops/s)")
    seconds = sum(times)
    return {"seconds": round(seconds, 3), "ops_per_s": round(n / seconds, 1), "batch": batch, "batches": len(times),
            "first_batch_ops_per_s": round(min(batch, n) / times[0], 1),
            "last_batch_ops_per_s": round((n - batch * (len(times) - 1)) / times[-1], 1),
            "batch_s_p50": round(pct(times, 50), 3), "generate_s_not_timed": round(gen_s, 1)}


def titles(tree: Path) -> list[str]:
    """The titles of a built tree's entries, read from its catalog (questions are made from them)."""
    db = sqlite3.connect(tree / ".memgrove" / "index" / "catalog.db")
    try:
        return [r[0] for r in db.execute("select title from files where kind = 'entry' and title != ''")]
    finally:
        db.close()


def build_tree(folder: Path, n: int, corpus: Corpus, batch: int, **open_args: Any) -> float:
    """The corpus's first ``n`` entries in a new memory at ``folder`` (``Memory.open(folder, create=True,
    durable=False, **open_args)``, ``mem.curate`` in batches of ``batch`` ADDs, each checked added): seconds."""
    from harness.report import log
    from memgrove import Memory

    start = time.perf_counter()
    with Memory.open(folder, create=True, durable=False, **open_args) as mem:
        for i in range(0, n, batch):
            res = mem.curate([corpus.op(j) for j in range(i, min(n, i + batch))])
            assert all(r.status == "added" for r in res)
            if (i // batch) % 20 == 19:
                log(f"  built {i + len(res)}/{n}")
    return time.perf_counter() - start


class LazyOps:
    """The first ``n`` ops of the corpus, generated on access (``Corpus.op`` is a pure function of i):
    the curve never holds all N entries in memory, so peak RSS is memgrove's, not the corpus's."""

    def __init__(self, corpus: Corpus, n: int):
        self.corpus, self.n = corpus, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict[str, Any]:
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.corpus.op(i)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self.corpus.op(i) for i in range(self.n))


# -- questions -------------------------------------------------------------------

# Out-of-domain vocabulary: everyday English, none of it in the synthetic corpus (checked per run).
OOD_WORDS = """
sourdough bread oven yeast flour butter garlic onion tomato basil pepper recipe kitchen dinner breakfast
kubernetes ingress certificate renewal invoice payroll holiday vacation passport airport luggage hotel
guitar violin piano concert orchestra soccer tennis football stadium referee marathon bicycle helmet
mortgage insurance pension dividend accountant receipt warranty plumber electrician carpenter roof
garden tulip orchid fertilizer lawnmower hedge squirrel rabbit hamster kitten puppy veterinarian
volcano glacier hurricane thunderstorm rainbow telescope planet asteroid comet galaxy nebula astronaut
chemistry biology physics algebra geometry calculus history geography literature poetry novel library
museum painting sculpture gallery theater ballet opera cinema director actor actress camera lens
keyboard monitor printer router laptop smartphone battery charger headphones speaker microphone
hospital doctor nurse pharmacy vaccine dentist surgery ambulance emergency bandage thermometer
""".split()
# Tier-2 question templates: stop words only, for the engine (whoosh_engine.STOP_WORDS) and the cache.
TEMPLATES = ["{}", "what do we know about {}?", "{}?", "what is {}?", "tell me about {}"]
REWORD_TEMPLATE = "please tell me about {}"   # same cache tokens as every TEMPLATE
_WORD = re.compile(r"[a-z]+")


class Questions:
    """Seeded question generators over one corpus of ``n`` entries."""

    def __init__(self, corpus: Corpus, ops: list[dict[str, Any]], seed: int):
        self.corpus, self.ops = corpus, ops
        df: collections.Counter[str] = collections.Counter()
        for o in ops:
            text = " ".join((o["title"], o["content"], " ".join(o["tags"]), o["path"].replace("_", " ")))
            df.update(set(_WORD.findall(text.lower())))
        self.df = df
        self.rng = random.Random(f"memgrove-tiers-questions-{seed}")
        self.seen: set[frozenset[str]] = set()
        self.used: set[int] = set()   # entries already asked about
        vocab = set(corpus.words)
        self.ood_words = [w for w in dict.fromkeys(OOD_WORDS) if w not in vocab and w not in df]

    def _new(self, words: list[str]) -> bool:
        key = frozenset(words)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def tier2(self, count: int) -> list[dict[str, Any]]:
        """Questions from an entry's 2-3 rarest title words, each set of words used once."""
        out: list[dict[str, Any]] = []
        order = list(range(len(self.ops)))
        self.rng.shuffle(order)
        for i in order:
            if len(out) >= count:
                break
            if i in self.used:
                continue
            o = self.ops[i]
            words = sorted(dict.fromkeys(o["title"].lower().split()), key=lambda w: (self.df[w], w))
            k = min(len(words), 2 + (len(out) % 2))
            if k < 2:
                continue
            chosen = words[:k]
            self.rng.shuffle(chosen)
            if not self._new(chosen):
                continue
            self.used.add(i)
            tmpl = TEMPLATES[len(out) % len(TEMPLATES)]
            out.append({"q": tmpl.format(" ".join(chosen)), "words": chosen, "template": tmpl,
                        "entry": o["path"]})
        return out

    @staticmethod
    def reword(item: dict[str, Any], j: int) -> tuple[str, str]:
        """Same content words, different wording: (question, how)."""
        w = item["words"]
        # not the words reversed: tier 1 refuses a change of word order ("Ana hired Ben")
        how = ("whats", "stopwords", "also")[j % 3]
        if how == "whats":
            return f"what's {' '.join(w)}?", how
        if how == "stopwords":
            return REWORD_TEMPLATE.format(" ".join(w)), how
        return item["template"].format(" ".join([w[0], "also"] + w[1:])), how

    def ood(self, count: int) -> list[str]:
        out = []
        tries = 0
        while len(out) < count and tries < count * 50:
            tries += 1
            ws = self.rng.sample(self.ood_words, 3)
            if self._new(ws):
                out.append(f"how do i {ws[0]} the {ws[1]} {ws[2]}?")
        return out

    def vocabulary(self, count: int) -> list[str]:
        out = []
        tries = 0
        while len(out) < count and tries < count * 50:
            tries += 1
            q = self.corpus.query(self.rng)
            if self._new(q.split()):
                out.append(q)
        return out
