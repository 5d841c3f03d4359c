"""The flow: the diagnosis and the FAQ's steps that run over it."""
