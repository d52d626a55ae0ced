"""Built-in converters (they import only :mod:`sluice.api` and the data mappings of
:mod:`sluice.formats`):

* :class:`StringConverter` — ``org.apache.kafka.connect.storage.StringConverter``
* :class:`ByteArrayConverter` — ``org.apache.kafka.connect.converters.ByteArrayConverter``
* :class:`JsonConverter` — ``org.apache.kafka.connect.json.JsonConverter``
* :class:`SimpleHeaderConverter` — ``org.apache.kafka.connect.storage.SimpleHeaderConverter``
* :class:`ShortConverter`, :class:`IntegerConverter`, :class:`LongConverter`,
  :class:`FloatConverter`, :class:`DoubleConverter` —
  ``org.apache.kafka.connect.converters.{Short,Integer,Long,Float,Double}Converter``
"""

from sluice.converters.bytearray import ByteArrayConverter
from sluice.converters.json import JsonConverter
from sluice.converters.number import DoubleConverter, FloatConverter, IntegerConverter, LongConverter, ShortConverter
from sluice.converters.simple_header import SimpleHeaderConverter
from sluice.converters.string import StringConverter

__all__ = [
    "ByteArrayConverter",
    "DoubleConverter",
    "FloatConverter",
    "IntegerConverter",
    "JsonConverter",
    "LongConverter",
    "ShortConverter",
    "SimpleHeaderConverter",
    "StringConverter",
]
