"""What a participant does with the bank themselves: their own survey and retest (``battery``), the portal
of every use of their agent, and withdrawal."""
