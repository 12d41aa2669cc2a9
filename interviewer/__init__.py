"""The AI interviewer: scripts, the interviewer's loop, transcription and speech."""
