"""HAF (spec ``HAF.md``): JUSTIFY, UPHOLD-REASON and UPHOLD-STANCE, and six metrics."""
