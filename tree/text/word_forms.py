"""Word forms mapped to one form before stemming: English irregular inflections
and informal or British spellings.

The stemmer joins "painted" to "paint" but leaves "went" apart from "go"
and "bought" apart from "buy", and questions ask in the base form ("Where did
Jon go?", "What did Ana buy?") about messages told in the past ("I went to
Paris", "I bought a kayak"). Each form here is mapped to its verb's (or noun's)
base, which the stemmer then treats like any other word, for documents and
queries alike.

Left out on purpose: forms that are mostly other words in conversation ("rose",
"bit", "lay", "ground", "wound", "lit", "bore", "tore"), forms whose base is a
stop word ("was", "did", "had", "done"), and "won": the tokenizer cuts "won't"
into "won" and "t", so "won" would make every "won't" match "win".

The stemmer also joins words that are not one word's forms: "publications" and "public"
(both ``public``), "university" and "universe", "business" and "busy", "organization" and
"organ". ``STEMS`` gives such a word family a stem of its own, which the analyzer uses
instead of the stemmer's.

The tables decide what is indexed: a change to them needs a new INDEX_FORMAT
(tree/store.py), so existing indexes are rebuilt.
"""

from __future__ import annotations

_TABLE = """
arise arose arisen | awake awoke awoken | beat beaten | become became | begin began begun | bend bent |
bite bitten | blow blew blown | break broke broken | breed bred | bring brought | build built |
burn burnt | buy bought | catch caught | choose chose chosen | come came | creep crept |
deal dealt | dig dug | draw drew drawn | dream dreamt | drink drank drunk | drive drove driven |
eat ate eaten | fall fell fallen | feed fed | feel felt | fight fought | find found | flee fled |
fly flew flown | forbid forbade forbidden | forget forgot forgotten | forgive forgave forgiven |
freeze froze frozen | get got gotten | give gave given | go went gone | grow grew grown |
hang hung | hear heard | hide hid hidden | hold held | keep kept | kneel knelt | know knew known |
lead led | lean leant | learn learnt | leave left | lend lent | lose lost | make made | mean meant |
meet met | pay paid | prove proven | ride rode ridden | ring rang rung | rise risen | run ran |
say said | see saw seen | seek sought | sell sold | send sent | shake shook shaken | shine shone |
shoot shot | show shown | shrink shrank shrunk | sing sang sung | sink sank sunk | sit sat |
sleep slept | slide slid | speak spoke spoken | speed sped | spend spent | spin spun | spring sprang sprung |
stand stood | steal stole stolen | stick stuck | sting stung | stink stank stunk | strike struck |
strive strove striven | swear swore sworn | sweep swept | swim swam swum | swing swung | take took taken |
teach taught | tell told | think thought | throw threw thrown | understand understood | wake woke woken |
wear wore worn | weave wove woven | weep wept | write wrote written |
child children | person people | man men | woman women | foot feet | tooth teeth | mouse mice | goose geese
"""

# Chat says "my mom", "the kids", "pics", "fave"; questions about it say "mother", "children",
# "photos", "favorite". Each row: the form kept, then the forms mapped to it. Only words whose
# informal form means nothing else; British spellings to American.
_VARIANTS = """
child kid kids kiddo kiddos | mother mom moms mum mums mommy mummy momma mama |
father dad dads daddy papa | grandmother grandma grandmas granny nana | grandfather grandpa grandpas granddad |
brother bro bros | sister sis | husband hubby | boyfriend bf | girlfriend gf |
photo photos pic pics picture pictures photograph photographs | favorite fave faves fav favs favourite favourites |
birthday bday bdays | vacation vacay | television tv telly | movie movies film films | university uni |
conversation convo convos | information info | minute mins | hour hrs | kilometer km kms |
color colour colours colourful | neighbor neighbour neighbours neighbourhood | honor honour | humor humour |
flavor flavour flavours | behavior behaviour | center centre centres | theater theatre theatres |
organize organise organised organising | realize realise realised realising | recognize recognise recognised |
apologize apologise apologised | practice practise practised practising | travel travelled travelling traveller |
cancel cancelled cancelling | jewelry jewellery | gray grey | program programme programmes | catalog catalogue |
defense defence | license licence | analyze analyse analysed | cozy cosy | airplane aeroplane
"""


def _base_of() -> dict[str, str]:
    out: dict[str, str] = {}
    for group in (_TABLE + "|" + _VARIANTS).split("|"):
        words = group.split()
        for form in words[1:]:
            out[form] = words[0]
    return out


# a form -> the form kept ("went" -> "go", "mom" -> "mother"); kept forms map to nothing
BASE_OF: dict[str, str] = _base_of()


# Word families Porter2 stems onto an unrelated word's stem: each row, the stem kept, then its
# forms (after the tables above). Only families whose other word is common and unrelated.
_STEM_EXCEPTIONS = """
publication publication publications | university university universities |
organization organization organizations organisation organisations | business business businesses |
international international internationally | animation animation animations animated |
authority authority authorities | experiment experiment experiments experimental experimentally |
communication communication communications
"""


def _stems() -> dict[str, str]:
    out: dict[str, str] = {}
    for group in _STEM_EXCEPTIONS.split("|"):
        words = group.split()
        for form in words[1:]:
            out[form] = words[0]
    return out


# a form -> its family's own stem, where Porter2 would join it to another word's
STEMS: dict[str, str] = _stems()

