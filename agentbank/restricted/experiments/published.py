"""The five experiments of Park et al. 2024 (their Table 1), written in the bank's own words.

The designs follow the published papers' abstracts and Park et al.'s descriptions; the exact stimuli of
the replications (Park et al.'s supplement) are not reproduced, so wording, amounts and scales are the
bank's. The human figures are Park et al.'s own participants (about 1,000 people, after their
interviews), who took these studies chosen from the Mechanical Turk Replication Project (Camerer et
al., mtrp.info; Holzmeister et al. 2024, Nature Human Behaviour): Cohen's d as printed in Table 1,
beside their GPT-4o agents' d by condition. The original studies' own effect sizes are not included.
"""

from __future__ import annotations

from agentbank.instruments.model import Item, Option
from agentbank.restricted.experiments.model import Analysis, AnalysisKind, Arm, Design, Experiment, HumanReference

PARK = "Park et al. 2024, Generative agent simulations of 1,000 people, arXiv:2411.10109, Table 1"
HUMANS_N = 1052  # Park et al.'s participants who took the five studies, split across each study's arms


def scale(key: str, question: str, low: str, high: str, points: int = 7) -> Item:
    """A rating from 1 (``low``) to ``points`` (``high``), labelled at every point by its number."""
    labels = {1: f"1 ({low})", points: f"{points} ({high})"}
    options = tuple(Option(n, labels.get(n, str(n))) for n in range(1, points + 1))
    return Item(key, "ordinal", question, options)


def choice(key: str, question: str, *labels: str) -> Item:
    """A choice among ``labels``, coded 1, 2, … in order."""
    return Item(key, "categorical", question, tuple(Option(n, label) for n, label in enumerate(labels, 1)))


AMES_FISKE = Experiment(
    key="ames_fiske",
    title="Intent and harm",
    citation="Ames & Fiske 2015, Perceived intent motivates people to magnify observed harms, PNAS 112(12)",
    design=Design.BETWEEN,
    arms=(
        Arm(
            "intended",
            "the manager meant to cut the workers' pay",
            (
                "At a small manufacturing firm the workers share in the profits. This year the manager moved the "
                "profit-sharing fund into a risky venture. He did it on purpose to cut the workers' share, because "
                "he wanted them to work harder for less. The venture lost money and every worker's bonus fell.",
            ),
        ),
        Arm(
            "accident",
            "the manager cut the workers' pay by mistake",
            (
                "At a small manufacturing firm the workers share in the profits. This year the manager moved the "
                "profit-sharing fund into a risky venture. He did it by mistake: he misread a report and believed "
                "the venture was safe and would raise the workers' share. The venture lost money and every "
                "worker's bonus fell.",
            ),
        ),
    ),
    steps=(
        (
            scale("harm", "How much harm did the loss do to the workers?", "no harm at all", "a great deal of harm"),
            Item(
                "harm_usd", "numeric", "About how many dollars do you think each worker lost?", minimum=0, maximum=5000
            ),
        ),
    ),
    analysis=Analysis(AnalysisKind.MEANS, "harm", treatment="intended", control="accident"),
    probes=(
        scale("p_firm_size", "How large do you picture the firm?", "very small", "very large"),
        scale("p_wealth", "How well off do you picture the workers?", "very poor", "very well off"),
    ),
    human=HumanReference(
        9.45,
        True,
        PARK,
        {"interview": 12.59, "demographic": 13.43, "persona": 10.03},
        HUMANS_N,
        comparable=False,
        note="Printed as Cohen's d, but too large to be one; not used in correlations or inflation ratios.",
    ),
)

COONEY = Experiment(
    key="cooney",
    title="Fairness and happiness",
    citation="Cooney, Gilbert & Wilson 2016, When fairness matters less than we expect, PNAS 113(40)",
    design=Design.BETWEEN,
    arms=(
        Arm(
            "unfair_more",
            "an unfair choice gave you the larger bonus",
            (
                "You and another participant each did the same short task. An organizer had one bonus of $4 and one "
                "of $1 to hand out. Instead of drawing lots, the organizer simply picked, saying they liked your "
                "name better. You received the $4 bonus; the other person received $1.",
            ),
        ),
        Arm(
            "fair_less",
            "a fair draw gave you the smaller bonus",
            (
                "You and another participant each did the same short task. An organizer had one bonus of $4 and one "
                "of $1 to hand out, and drew lots in front of you both to decide fairly. You received the $1 "
                "bonus; the other person received $4.",
            ),
        ),
    ),
    steps=(
        (
            scale(
                "happy",
                "How happy do you feel right now about how this turned out?",
                "not at all happy",
                "extremely happy",
            ),
        ),
    ),
    analysis=Analysis(AnalysisKind.MEANS, "happy", treatment="unfair_more", control="fair_less"),
    probes=(
        scale("p_task_effort", "How hard do you picture the task was?", "very easy", "very hard"),
        scale("p_other_need", "How much do you think the other person needed the money?", "not at all", "very much"),
    ),
    human=HumanReference(0.40, True, PARK, {"interview": 1.48, "demographic": 1.39, "persona": 1.37}, HUMANS_N),
)

HALEVY_HALALI = Experiment(
    key="halevy_halali",
    title="Third parties and conflict",
    citation="Halevy & Halali 2015, Selfish third parties act as peacemakers by transforming conflicts and "
    "promoting cooperation, PNAS 112(22)",
    design=Design.BETWEEN,
    arms=(
        Arm(
            "low_risk",
            "stepping in costs the third party little if the others keep fighting",
            (
                "Two other participants are in a dispute: each will choose to cooperate or to compete. You are the "
                "third party. If you stay out, you receive $5 whatever they do. If you step in, you add a payment "
                "that makes cooperating pay more for both of them, and your own pay depends on what they then do: "
                "$6 if both cooperate, $5 if only one does, $4 if both compete.",
            ),
        ),
        Arm(
            "high_risk",
            "stepping in costs the third party a lot if the others keep fighting",
            (
                "Two other participants are in a dispute: each will choose to cooperate or to compete. You are the "
                "third party. If you stay out, you receive $5 whatever they do. If you step in, you add a payment "
                "that makes cooperating pay more for both of them, and your own pay depends on what they then do: "
                "$6 if both cooperate, $2 if only one does, $0 if both compete.",
            ),
        ),
    ),
    steps=((choice("intervene", "Do you step in or stay out?", "step in", "stay out"),),),
    analysis=Analysis(AnalysisKind.PROPORTIONS, "intervene", treatment="low_risk", control="high_risk", success=1),
    probes=(
        scale(
            "p_coop_likely",
            "How likely do you think it is that the two will cooperate?",
            "very unlikely",
            "very likely",
        ),
        scale("p_hostility", "How bitter do you picture their dispute?", "not at all bitter", "very bitter"),
    ),
    human=HumanReference(0.90, True, PARK, {"interview": 2.98, "demographic": 4.22, "persona": 3.35}, HUMANS_N),
)

_RAI_PEOPLE = {
    "dehumanizing": "He is a brute, more animal than man, who lives like a creature in a den.",
    "humanizing": "He is a man with his own hopes and memories, who lives in an apartment across town.",
}
_RAI_MOTIVES = {
    "instrumental": "Someone offers you $1,000,000 to hurt this stranger badly enough that he needs a week in "
    "hospital. Nobody would ever find out.",
    "moral": "You learn that this stranger cheated an elderly neighbour out of her savings and got away with it. "
    "You could hurt him badly enough that he needs a week in hospital. Nobody would ever find out.",
}


def _rai_arm(language: str, motive: str) -> Arm:
    summary = f"the stranger is described in {language} words; the reason to hurt him is {motive}"
    stimulus = f"Imagine a stranger you have never met. {_RAI_PEOPLE[language]} {_RAI_MOTIVES[motive]}"
    return Arm(f"{language[:5]}_{motive[:5]}", summary, (stimulus,), {"language": language, "motive": motive})


RAI = Experiment(
    key="rai",
    title="Dehumanization and violence",
    citation="Rai, Valdesolo & Graham 2017, Dehumanization increases instrumental violence, but not moral "
    "violence, PNAS 114(32)",
    design=Design.BETWEEN,
    arms=tuple(_rai_arm(language, motive) for language in _RAI_PEOPLE for motive in _RAI_MOTIVES),
    steps=((scale("willing", "How willing would you be to do it?", "not at all willing", "completely willing"),),),
    analysis=Analysis(
        AnalysisKind.INTERACTION,
        "willing",
        control="human_moral",
        factors=("language", "motive"),
        levels={"language": ("dehumanizing", "humanizing"), "motive": ("instrumental", "moral")},
    ),
    probes=(
        scale("p_danger", "How dangerous do you picture the stranger?", "not at all", "very dangerous"),
        scale(
            "p_caught", "How likely do you think it is that you would be caught anyway?", "very unlikely", "very likely"
        ),
    ),
    human=HumanReference(
        0.040,
        False,
        PARK,
        {"interview": 0.094, "demographic": 0.21, "persona": 0.078},
        HUMANS_N,
        note="Did not replicate in people; Park et al.'s demographic agents found an effect.",
    ),
)

_SCHILKE_EXCHANGE = "You trade with partners in a market for used phones; each deal is negotiated with one partner. "
SCHILKE = Experiment(
    key="schilke",
    title="Power and trust",
    citation="Schilke, Reimann & Cook 2015, Power decreases trust in social exchange, PNAS 112(42)",
    design=Design.BETWEEN,
    arms=(
        Arm(
            "low_power",
            "you depend on one partner, who has other partners",
            (
                _SCHILKE_EXCHANGE + "You have only one partner to trade with, and that partner can trade with "
                "several others, so you need them more than they need you.",
                "Now a separate decision with a partner you will never meet. You have $1. You can keep it, or "
                "send it: sent money is tripled to $3, and the partner then either splits it evenly ($1.50 each) "
                "or keeps all $3.",
            ),
        ),
        Arm(
            "high_power",
            "you have several partners; your one partner depends on you",
            (
                _SCHILKE_EXCHANGE + "You can trade with several partners, and your partner can trade only with "
                "you, so they need you more than you need them.",
                "Now a separate decision with a partner you will never meet. You have $1. You can keep it, or "
                "send it: sent money is tripled to $3, and the partner then either splits it evenly ($1.50 each) "
                "or keeps all $3.",
            ),
        ),
    ),
    steps=(
        (scale("power_felt", "How much power do you feel you have in this market?", "none at all", "a great deal"),),
        (choice("trust", "Do you send the $1 or keep it?", "send it", "keep it"),),
    ),
    analysis=Analysis(AnalysisKind.PROPORTIONS, "trust", treatment="low_power", control="high_power", success=1),
    probes=(
        scale(
            "p_partner_honest", "How honest do you picture the traders in this market?", "very dishonest", "very honest"
        ),
        scale("p_stakes", "How much money do you picture a typical deal is worth?", "very little", "a great deal"),
    ),
    human=HumanReference(0.33, True, PARK, {"interview": 2.97, "demographic": 5.52, "persona": 3.74}, HUMANS_N),
)

PUBLISHED = (AMES_FISKE, COONEY, HALEVY_HALALI, RAI, SCHILKE)
