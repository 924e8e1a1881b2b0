"""ViLMA's foiling tools (paper 002, §3 and appendix C): masked-LM candidates by dependency role,
grammaticality filtering, counting and change-of-state templates, actor swapping and spatial
preposition swaps."""
