"""HAF (``docs/methods/haf.md``): JUSTIFY, UPHOLD-REASON and UPHOLD-STANCE, and six metrics."""
