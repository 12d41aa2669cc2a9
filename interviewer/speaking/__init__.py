"""The interviewer's voice: speech synthesis and the cache of the script's sentences."""
