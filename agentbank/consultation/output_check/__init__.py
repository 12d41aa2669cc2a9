"""The output check on individual answers, and the reviewers' queue for what it holds back.

``check`` is the one verdict; ``canonical`` strips visual disguises, ``decoding`` reads encodings back,
``games`` undoes word games and letter shifts, ``views`` holds the letters and consonants views,
``chains`` finds a turn's words in order, ``positions`` finds the places of a turn an answer shows,
``received`` remembers what a project already has from an agent; ``highlights`` and ``withheld`` serve
the reviewer."""
