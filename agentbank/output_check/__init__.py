"""The output check on individual answers, and the reviewers' queue for what it holds back.

``check`` is the one verdict; ``canonical`` strips visual disguises, ``decoding`` reads encodings back,
``chains`` finds a turn's words in order, ``received`` remembers what a project already has from an agent;
``highlights`` and ``withheld`` serve the reviewer."""
