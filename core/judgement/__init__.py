"""The judgement: checks turn facts into findings; judge ranks them and decides the verdict."""
