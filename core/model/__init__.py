"""The model: findings, cause codes, their declarations, and the facts they are judged from."""
