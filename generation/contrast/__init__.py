"""Contrast-set foils of Park et al. (2022): gender and person-ID swaps, LM verb-phrase foils,
and the MSR-VTT multiple-choice items built from them (paper 001, §3 and appendices A, D)."""
