"""Which noun phrases name people: the check behind actor swapping (ViLMA §3.3).

ViLMA's actor-swap foils exchange two *actors*: "The man in a tank top kicks towards a ninja on
the left" -> "A ninja on the left kicks towards the man in a tank top". Swapping a person with a
thing or a place gives nonsense ("The cooking area entered the man"), so a phrase counts as a
person only when its head is a personal pronoun, a spaCy ``PERSON`` entity, or a noun of
:data:`PERSON_NOUNS` (WordNet's ``person.n.01`` hyponyms that video captions use; WordNet's own
data is not installable from PyPI, so the list ships here). A compound whose last part is a
person noun counts (``policewoman``, ``tee-ball player``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Token

#: Pronouns that refer to people (not ``it``); indefinite ones included.
PERSON_PRONOUNS = frozenset(
    "i me you he him she her we us they them someone somebody anyone anybody everyone "
    "everybody nobody themselves himself herself".split()
)

#: Nouns (lemmas) that name a person: kinship, age and gender, occupations, roles, groups of
#: people. Lower case; matched on the lemma and on the word itself (``men``, ``people``).
PERSON_NOUNS = frozenset(
    "person people persons individual human humans man men woman women boy boys girl "
    "girls guy guys gentleman gentlemen lady ladies lad lass fellow gal dude child "
    "children kid kids baby babies infant toddler teen teenager youngster youth adult "
    "adults elder elderly senior male female brother sister mother father mom mum dad "
    "mommy daddy parent grandmother grandfather grandma grandpa granny grandparent son "
    "daughter husband wife spouse partner boyfriend girlfriend fiance fiancee bride groom "
    "uncle aunt nephew niece cousin sibling twin family friend buddy pal neighbor "
    "neighbour stranger companion colleague coworker classmate roommate guest host "
    "hostess visitor customer client patient passenger driver rider pilot captain crew "
    "sailor soldier officer sergeant general commander warrior knight guard policeman "
    "policewoman police cop detective sheriff agent spy criminal thief robber prisoner "
    "inmate suspect victim hostage attacker assailant fighter boxer wrestler opponent "
    "enemy rival ninja samurai gangster killer murderer bandit pirate doctor nurse "
    "surgeon dentist medic paramedic therapist physician vet veterinarian teacher student "
    "pupil professor lecturer instructor coach trainer tutor principal chef cook baker "
    "butcher waiter waitress bartender barista cashier clerk shopkeeper vendor seller "
    "salesman saleswoman merchant buyer worker workman laborer labourer builder carpenter "
    "plumber electrician mechanic engineer technician farmer gardener fisherman hunter "
    "miner janitor cleaner maid servant butler nanny babysitter employee employer boss "
    "manager owner chief leader president king queen prince princess lord duke emperor "
    "ruler politician senator mayor minister priest monk nun pastor bishop pope preacher "
    "judge lawyer attorney witness artist painter sculptor musician singer drummer "
    "guitarist pianist violinist dancer ballerina actor actress performer entertainer "
    "comedian clown magician juggler acrobat model photographer cameraman reporter "
    "journalist presenter anchor host announcer narrator speaker interviewer interviewee "
    "narrator author writer poet director producer player athlete sportsman sportswoman "
    "runner jogger swimmer diver surfer skier skater skateboarder snowboarder cyclist "
    "biker climber gymnast golfer batter pitcher catcher goalkeeper goalie striker "
    "quarterback referee umpire champion teammate team winner loser contestant competitor "
    "participant racer jockey hiker camper tourist traveler traveller explorer cowboy "
    "cowboys cowgirl horseman horsemen firefighter fireman couple newlyweds lifeguard "
    "ranger paramedic villain vampire zombie alien monster scientist researcher inventor "
    "chemist astronaut gamer blogger vlogger youtuber streamer customer shopper audience "
    "crowd spectator fan viewer onlooker bystander pedestrian commuter resident citizen "
    "villager local native foreigner immigrant refugee volunteer member chap bloke mister "
    "madam sir lady boyscout scout cheerleader mascot bodybuilder weightlifter lifter "
    "beautician hairdresser barber stylist tailor character figure protagonist hero "
    "heroine villain".split()
)


def is_person_token(token: Token) -> bool:
    """Whether ``token`` (a noun or pronoun heading a phrase) names a person."""
    word, lemma = token.lower_, token.lemma_.lower()
    if token.pos_ == "PRON":
        return word in PERSON_PRONOUNS
    if token.ent_type_ == "PERSON" and token.pos_ == "PROPN":
        return True
    if token.pos_ not in ("NOUN", "PROPN"):
        return False
    for form in (word, lemma):
        if form in PERSON_NOUNS or form.rsplit("-", 1)[-1] in PERSON_NOUNS:
            return True
    return False


#: Garments: what a person wears ("in a tank top", "a white shirt and vest").
GARMENTS = frozenset(
    ["in a tank top"]
    + (
        "shirt shirts t-shirt tee tee-shirt top tops blouse sweater sweatshirt hoodie jumper "
        "jacket coat overcoat trenchcoat raincoat suit suits tuxedo dress gown robe skirt "
        "pants trousers jeans shorts leggings overalls uniform outfit outfits costume clothes "
        "clothing attire garb gear armor armour vest tank cardigan kimono sari apron scrubs "
        "pajamas pyjamas nightgown swimsuit bikini hat cap helmet hood scarf tie glasses "
        "sunglasses goggles mask gloves boots shoes sneakers heels socks jersey cape cloak "
        "poncho blazer turban veil headscarf bandana beanie tights undershirt overall "
        "sweatpants sandals slippers bathrobe".split()
    )
)

#: Heads of what a person is "in" when the phrase describes them ("in a tank top", "in red"),
#: as opposed to where they are ("in the kitchen"): garments, the materials, colours and
#: patterns they are named by, and a wheelchair.
CLOTHING = GARMENTS | frozenset(
    "leather denim fur lace camouflage black white red blue green yellow orange purple "
    "pink brown gray grey beige tan gold silver khaki maroon navy dark light stripes "
    "plaid wheelchair camo print".split()
)

#: Parts of the body: a place phrase on one says where an action lands ("kisses a woman on
#: the neck", "punched him in the face"), not which person it is.
BODY_PARTS = frozenset(
    "head face forehead cheek chin jaw nose mouth lip lips ear eye eyes neck throat "
    "shoulder arm elbow wrist hand finger chest breast back stomach belly waist hip torso "
    "leg knee ankle foot feet toe groin".split()
)

_MALE = frozenset(
    "man men boy boys guy guys gentleman gentlemen lad fellow dude father dad daddy son "
    "brother husband boyfriend uncle nephew grandfather grandpa king prince lord duke "
    "monk priest policeman fisherman salesman sportsman workman waiter actor he him his".split()
)
_FEMALE = frozenset(
    "woman women girl girls lady ladies lass gal mother mom mum mommy daughter sister "
    "wife girlfriend aunt niece grandmother grandma granny queen princess nun policewoman "
    "saleswoman sportswoman waitress actress bride hostess ballerina she her hers".split()
)


def is_clothing(token: Token) -> bool:
    """Whether ``token`` heads something worn (or a colour worn: "in red")."""
    return token.lower_ in CLOTHING or token.lemma_.lower() in CLOTHING


def is_garment(token: Token) -> bool:
    """Whether ``token`` names a garment ("vest"; not a colour such as "blue")."""
    return token.lower_ in GARMENTS or token.lemma_.lower() in GARMENTS


def is_body_part(token: Token) -> bool:
    """Whether ``token`` names a part of the body ("the neck", "her arms")."""
    return token.lower_ in BODY_PARTS or token.lemma_.lower() in BODY_PARTS


def person_gender(token: Token) -> str | None:
    """``"male"``, ``"female"`` or ``None`` (unknown or neutral: person, child, doctor)."""
    for form in (token.lower_, token.lemma_.lower()):
        if form in _MALE:
            return "male"
        if form in _FEMALE:
            return "female"
    return None
