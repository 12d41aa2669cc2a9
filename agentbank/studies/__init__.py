"""Studies: a cohort invited under one name, script, size, expiry and recruitment panel, and where each
participant stands, read from the tables the interview, survey, builds and cards already write.

A coordinator sees stages, times and counts, never a word, an answer or a contact: the quality of an
interview is read from counts kept as its turns are written, and a withdrawal leaves only a count.
"""
