"""C++ source as the structure checks read it: comments blanked (newlines kept, so line numbers
hold), string and character literals (raw ones too) kept or blanked as the check needs."""
import re


def blank(text, literals):
    """`text` with // and /* */ comments blanked; string and character literals kept as they are
    (literals=False) or blanked to their quotes (literals=True, for brace counting)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            k = text.find('(', i + 2)
            end = text.find(')' + text[i + 2:k] + '"', k) if k >= 0 else -1
            j = n if end < 0 else end + (k - i - 2) + 2
            out.append('""' + re.sub(r'[^\n]', ' ', text[i + 2:j]) if literals else text[i:j])
            i = j
        elif c in '"\'':
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + ' ' * max(0, j - i - 1) + c if literals else text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)
