"""Quality reports of foilkit's foil filters and generators, on items they were not tuned on.

A keep rate ("the filter keeps 95% of the published foils") says nothing of quality: a filter
that keeps everything scores 100%. Each report here offers a filter or generator labelled
*positives* (what it must keep: published foils, paraphrases) and the *negatives* its paper's
method exists to stop (synonyms, order reversals, ungrammatical or same-meaning swaps,
refusals), made independently of the check under test, on a held-out split named by the
report, and gives accept rates per kind and the precision and recall of its rejections.
``foilkit generate quality <report>`` runs one on a seeded sample; ``benchmarks/
generation_quality.py`` gives the full figures ``docs/generation.md`` quotes.
"""
