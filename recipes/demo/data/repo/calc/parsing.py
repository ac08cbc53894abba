"""Parsing helpers for numbers and simple arithmetic expressions."""

OPERATORS = "+-*/()"


def parse_number(text):
    """Parse *text* as an int when possible, otherwise as a float."""
    text = text.strip()
    if not text:
        raise ValueError("cannot parse an empty string as a number")
    try:
        return int(text)
    except ValueError:
        return float(text)


def tokenize(expression):
    """Split an arithmetic *expression* into number and operator tokens."""
    tokens = []
    i = 0
    while i < len(expression):
        char = expression[i]
        if char == " ":
            i += 1
        elif char.isdigit() or char == ".":
            start = i
            while i < len(expression) and (expression[i].isdigit() or expression[i] == "."):
                i += 1
            tokens.append(expression[start:i])
        elif char in OPERATORS:
            tokens.append(char)
            i += 1
    return tokens
