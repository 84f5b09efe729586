"""A researcher's own method, outside haf-tui: one package, found through the
``haf_tui.methods`` entry point (the plug-in proof test, issue 26). It asks the model for one
word about each text and scores whether that word is the settings' ``word``."""
