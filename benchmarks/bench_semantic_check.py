"""Would a semantic check catch paraphrased and translated turns at an honest false-withhold rate?

The output check compares words: a turn paraphrased closely, or translated word by word, passes it. A
semantic check would compare meanings instead: the cosine similarity between an answer's sentence
embedding and each of the participant's turns (the bank's own local MiniLM), withholding above a
threshold. This measures it on a small labelled set written for it: six turns of an interview; for
each, a close paraphrase and a word-by-word translation (leaks), and honest answers in the person's
voice on the same subjects (what a study asks for). For each threshold: the share of leaks caught and
of honest answers withheld. The check is worth adopting only if some threshold catches most leaks while
withholding almost no honest answer.

Run: python -m benchmarks.bench_semantic_check   (seconds; the figures are shares, not timings)
"""

from __future__ import annotations

import subprocess

import numpy as np

from agentbank.providers.embeddings import LocalMiniLMEmbedder
from benchmarks.common import save

TURNS = {
    "farm": (
        "I grew up on a dairy farm outside Dayton with my two brothers, and every morning before school we "
        "milked forty cows in the dark, which is why I still wake up at five without an alarm."
    ),
    "father": (
        "My father never said he was proud of me, not once, but the day I got the job at the plant he drove "
        "two hours just to see the building from the parking lot and then drove home without coming in."
    ),
    "money": (
        "We lost the farm in the eighties when the bank called the loan, and I promised myself I would never "
        "owe anybody money again, so I paid cash for every car I ever owned."
    ),
    "church": (
        "I stopped going to church after my sister died, not because I was angry at God but because the "
        "pastor kept calling it a blessing and I could not sit there and listen to that."
    ),
    "work": (
        "Thirty one years on the line at the plant, and the thing I miss is not the money but the noise, "
        "the way the whole floor hummed at the start of a shift like it was alive."
    ),
    "politics": (
        "I voted for both parties over the years and I will tell you the truth, neither one of them ever "
        "came out to our county unless it was two weeks before an election."
    ),
}
PARAPHRASES = {
    "farm": "As a kid I was raised on a dairy farm near Dayton with my two brothers; each day before classes we "
    "milked about forty cows while it was still dark, and that is why I still get up at five with no alarm.",
    "father": "Dad never once told me he was proud, but when I was hired at the plant he made a two hour trip only "
    "to look at the building from the lot, and then he went back home without going inside.",
    "money": "The bank called in our loan in the eighties and we lost the farm, so I swore I would never be in debt "
    "to anyone again, and I have paid cash for every car I have owned.",
    "church": "When my sister passed away I quit going to church, not out of anger at God, but because the minister "
    "kept calling her death a blessing and I couldn't sit and hear that.",
    "work": "I spent thirty one years on the plant's line, and what I miss isn't the pay but the sound, the way the "
    "whole floor would hum when a shift began, as if it were alive.",
    "politics": "Over the years I have voted for both parties, and honestly neither of them ever showed up in our "
    "county except a couple of weeks before an election.",
}
TRANSLATIONS = {  # word by word, as a model asked to "translate exactly" writes them
    "farm": "Crecí en una granja lechera cerca de Dayton con mis dos hermanos, y cada mañana antes de la escuela "
    "ordeñábamos cuarenta vacas en la oscuridad, por eso todavía me despierto a las cinco sin alarma.",
    "father": "Mi padre nunca dijo que estaba orgulloso de mí, ni una vez, pero el día que conseguí el trabajo en la "
    "planta condujo dos horas solo para ver el edificio desde el estacionamiento y luego volvió a casa.",
    "money": "Perdimos la granja en los ochenta cuando el banco reclamó el préstamo, y me prometí que nunca más le "
    "debería dinero a nadie, así que pagué en efectivo cada coche que tuve.",
    "church": "Dejé de ir a la iglesia después de que murió mi hermana, no porque estuviera enojado con Dios sino "
    "porque el pastor seguía llamándolo una bendición y no podía quedarme sentado escuchando eso.",
    "work": "Treinta y un años en la línea de la planta, y lo que extraño no es el dinero sino el ruido, la forma en "
    "que todo el piso zumbaba al comienzo de un turno como si estuviera vivo.",
    "politics": "Voté por ambos partidos a lo largo de los años y les diré la verdad, ninguno de ellos vino a nuestro "
    "condado a menos que fueran dos semanas antes de una elección.",
}
HONEST = {  # answers a study asks for: the person's views and experiences, on the same subjects
    "farm": [
        "Growing up on a farm taught me that the work does not care how you feel; the animals need you anyway.",
        "I think kids today miss out by not having chores that really matter to the family.",
        "Rural life was hard but honest, and I would not trade those years for anything.",
        "I still get up early, old habits die hard.",
        "My brothers and I fought a lot, but we always had each other's backs on the farm.",
        "I would support more help for small family farms; they are disappearing around here.",
    ],
    "father": [
        "My father was a quiet man who showed love by working, not by talking.",
        "I try to tell my own kids I am proud of them, maybe because I never heard it myself.",
        "Fathers of that generation did not talk about feelings much.",
        "I think about him every time I drive past the old plant.",
        "He was strict but fair, and I respect that more now than I did then.",
    ],
    "money": [
        "I do not trust banks much, and I keep my savings somewhere I can reach.",
        "Debt scares me; I would rather go without than borrow.",
        "I think the government should do more to protect farmers from foreclosure.",
        "Paying cash keeps me honest about what I can afford.",
        "Money was always tight, but we never went hungry.",
        "The eighties were a rough time for everyone in farming country.",
    ],
    "church": [
        "I still believe in God, I just do not need a building to talk to Him.",
        "Losing my sister was the hardest thing that ever happened to our family.",
        "I think churches do a lot of good in small towns, even if it is not for me anymore.",
        "People say things at funerals that they think will help, and sometimes they hurt.",
        "Faith is private for me now.",
    ],
    "work": [
        "Factory work gave me a good life and a pension, and I am grateful for that.",
        "I miss the people at the plant more than the work itself.",
        "Unions made a real difference for us on the line.",
        "Retirement is quieter than I expected, maybe too quiet.",
        "I would tell young people a trade is a fine way to make a living.",
        "The plant was loud, but you got used to it and then you missed it.",
    ],
    "politics": [
        "I think politicians only care about places like ours at election time.",
        "I vote for the person, not the party.",
        "Honestly I do not trust either side to fix things in rural counties.",
        "Local government matters more to my life than what happens in Washington.",
        "I would like to see candidates actually visit small towns and listen.",
        "Both parties have let working people down at one time or another.",
    ],
}
# Honest answers that restate a fact the person told (where they grew up, what they did): a study asks
# for these, and they are the hardest for a check on meaning to tell from a paraphrase.
RESTATED = [
    "I grew up on a dairy farm near Dayton, with my two brothers.",
    "We milked cows every morning before school, so I am still an early riser.",
    "My dad drove two hours just to look at the plant when I got hired there; that was his way.",
    "We lost our farm in the eighties, and since then I have never borrowed money.",
    "I always pay cash for my cars because of what happened to our farm.",
    "I quit church after my sister died; the way the pastor talked about it drove me away.",
    "I worked thirty one years on the line at the plant, and I miss the hum of the floor.",
    "Politicians from both parties only came to our county right before elections.",
]
THRESHOLDS = [round(0.50 + 0.025 * i, 3) for i in range(19)]


def _max_similarity(vectors: np.ndarray, turns: np.ndarray) -> np.ndarray:
    return np.max(vectors @ turns.T, axis=1)


def main() -> None:
    embedder = LocalMiniLMEmbedder(threads=1)
    turn_vectors = embedder.embed(list(TURNS.values()))
    scores = {
        "paraphrase": _max_similarity(embedder.embed(list(PARAPHRASES.values())), turn_vectors),
        "translation": _max_similarity(embedder.embed(list(TRANSLATIONS.values())), turn_vectors),
        "honest": _max_similarity(embedder.embed([a for answers in HONEST.values() for a in answers]), turn_vectors),
        "restated": _max_similarity(embedder.embed(RESTATED), turn_vectors),
    }
    honest = np.concatenate([scores["honest"], scores["restated"]])
    rows = []
    for threshold in THRESHOLDS:
        share = {kind: round(float(np.mean(values >= threshold)), 3) for kind, values in scores.items()}
        rows.append({"threshold": threshold, "paraphrase_caught": share["paraphrase"],
                     "translation_caught": share["translation"],
                     "false_withheld": round(float(np.mean(honest >= threshold)), 3),
                     "restating_withheld": share["restated"]})  # fmt: skip
    # The most leaks caught while withholding at most one honest answer in fifty (the bar for adopting it).
    usable = [r for r in rows if r["false_withheld"] <= 0.02]
    best = max(usable, key=lambda r: (r["paraphrase_caught"] + r["translation_caught"], -r["threshold"]), default=None)
    figures = {
        "embedder": embedder.name,
        "set": {"turns": len(TURNS), "paraphrases": len(PARAPHRASES), "translations": len(TRANSLATIONS),
                "honest": len(scores["honest"]), "honest_restating_a_fact": len(RESTATED)},
        "similarity": {kind: {"min": round(float(v.min()), 3), "median": round(float(np.median(v)), 3),
                              "max": round(float(v.max()), 3)} for kind, v in scores.items()},
        "by_threshold": rows,
        "best_at_most_2pct_false_withheld": best,
        "adopted_for_paraphrase": bool(best and best["paraphrase_caught"] >= 0.9),
        "adopted_for_translation": bool(best and best["translation_caught"] >= 0.9),
        "uptime": subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip(),
    }  # fmt: skip
    path = save("semantic-check", figures)
    for kind, summary in figures["similarity"].items():
        print(f"{kind:12} cosine to the nearest turn: {summary}")
    print(f"best threshold with at most 2% honest answers withheld: {best}")
    print(f"holds for paraphrase: {figures['adopted_for_paraphrase']}, for translation: "
          f"{figures['adopted_for_translation']} -> {path}")  # fmt: skip


if __name__ == "__main__":
    main()
