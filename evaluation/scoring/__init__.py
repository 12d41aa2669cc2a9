"""A run's answers turned into figures: accuracy normalized by retest, traits, spread, distortions, findings, cards."""
