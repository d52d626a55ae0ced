"""Java compatibility: how Java and Kafka's Java code format, narrow, parse and name
things, emulated in Python.

Private to Sluice, and a leaf: nothing here imports from the rest of Sluice, so every
layer (``sluice.api`` included) may use it. One theme a module:

* :mod:`sluice._java.numbers` — integer narrowing (two's complement), casts of doubles,
  float32 rounding, ``Integer.parseInt``/``Double.parseDouble``/``new BigDecimal(String)``.
* :mod:`sluice._java.text` — Jackson's JSON string literals, ``Double.toString`` and
  ``Float.toString``, ``String.split``.
* :mod:`sluice._java.dates` — ``java.text.SimpleDateFormat`` (UTC, ``en_US``): pattern
  tokens, field formatters, format and parse; ``java.util.Date`` instants of Python dates.
* :mod:`sluice._java.regex` — ``java.util.regex`` patterns and ``Matcher`` replacement
  strings in Python's ``re``.
* :mod:`sluice._java.names` — class names as Java error messages print them.

Errors are Python's (:class:`ValueError`, :class:`re.error`); callers turn them into
Connect's exceptions where Kafka throws those.
"""
