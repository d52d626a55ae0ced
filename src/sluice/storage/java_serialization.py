"""The subset of Java Object Serialization that Kafka's standalone offset file uses.

Kafka Connect's ``FileOffsetBackingStore`` stores its offsets as one
``java.util.HashMap<byte[], byte[]>`` written with ``ObjectOutputStream`` (spec 5.4).
This module writes that stream byte for byte as OpenJDK does, and reads any stream
whose top-level object is a ``java.util.HashMap`` (or a subclass such as
``LinkedHashMap``) of ``byte[]`` keys and ``byte[]``-or-null values.

Writing (``dump_hashmap``) produces exactly what ``new HashMap<>()`` + ``put`` per entry
+ ``ObjectOutputStream.writeObject`` produces, in the dict's order::

    AC ED 00 05                                   stream magic, version 5
    73 72 <"java.util.HashMap"> 05 07 DA C1 C3 16 60 D1 03
          00 02 46 <"loadFactor"> 49 <"threshold"> 78 70
                                                  TC_OBJECT, class desc (handle 7E0000);
                                                  the map itself is handle 7E0001
    3F 40 00 00  <threshold:int>                  defaultWriteObject(): the two fields
    77 08 <capacity:int> <size:int>               block data written by HashMap.writeObject
    per entry: key, then value, each one of
      75 72 <"[B"> AC F3 17 F8 06 08 54 E0 02 00 00 78 70 <len:int> <bytes>
                                                  first array: new [B class desc (7E0002)
      75 71 00 7E 00 02 <len:int> <bytes>         later arrays: back-reference to it
      70                                          null
    78                                            TC_ENDBLOCKDATA

Every array object takes a handle too (7E0003, 7E0004, ...), so a reference to an
*array* (Java writes one when the same ``byte[]`` instance appears twice) is resolved
correctly by the reader. Java's HashMap specifics reproduced by the writer:

* capacity is 16, doubled while ``size > 0.75 * capacity``; threshold is
  ``int(capacity * 0.75)``;
* an **empty** map has never allocated its table, so Java writes threshold **0** (and
  capacity 16), not 12.

Reading is a small general parser of the stream grammar (class descriptors with fields
and annotations, objects with custom ``writeObject`` data, arrays of any component type,
strings, enums, classes, back-references, resets, block data of either size), so files
written by any JDK are accepted. Proxy class descriptors, externalizable objects written
with protocol version 1 and serialized exceptions are rejected.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "JavaSerializationError",
    "TruncatedStreamError",
    "dump_hashmap",
    "hashmap_capacity_and_threshold",
    "load_hashmap",
]

log = logging.getLogger(__name__)

STREAM_MAGIC = 0xACED
STREAM_VERSION = 5

TC_NULL = 0x70
TC_REFERENCE = 0x71
TC_CLASSDESC = 0x72
TC_OBJECT = 0x73
TC_STRING = 0x74
TC_ARRAY = 0x75
TC_CLASS = 0x76
TC_BLOCKDATA = 0x77
TC_ENDBLOCKDATA = 0x78
TC_RESET = 0x79
TC_BLOCKDATALONG = 0x7A
TC_EXCEPTION = 0x7B
TC_LONGSTRING = 0x7C
TC_PROXYCLASSDESC = 0x7D
TC_ENUM = 0x7E

BASE_WIRE_HANDLE = 0x7E0000

SC_WRITE_METHOD = 0x01
SC_SERIALIZABLE = 0x02
SC_EXTERNALIZABLE = 0x04
SC_BLOCK_DATA = 0x08
SC_ENUM = 0x10

HASHMAP_CLASS = "java.util.HashMap"
HASHMAP_SUID = 0x0507DAC1C31660D1
BYTE_ARRAY_CLASS = "[B"
BYTE_ARRAY_SUID = 0xACF317F8060854E0  # as an unsigned 64-bit number

_DEFAULT_CAPACITY = 16
_LOAD_FACTOR = 0.75
_MAXIMUM_CAPACITY = 1 << 30
_INT_MAX = (1 << 31) - 1
_MAX_DEPTH = 200


class JavaSerializationError(ValueError):
    """The data is not a Java serialization stream this module can read."""


class TruncatedStreamError(JavaSerializationError, EOFError):
    """The stream ended early (Java would throw ``EOFException``)."""


# --------------------------------------------------------------------------- writing


def hashmap_capacity_and_threshold(size: int) -> tuple[int, int]:
    """(bucket capacity, threshold) of a ``new HashMap<>()`` after ``size`` puts."""
    if size < 0:
        raise ValueError("size must be >= 0")
    if size == 0:
        # The table is allocated lazily: capacity() falls back to 16, threshold stays 0.
        return _DEFAULT_CAPACITY, 0
    capacity = _DEFAULT_CAPACITY
    threshold = int(capacity * _LOAD_FACTOR)
    while size > threshold:
        if capacity >= _MAXIMUM_CAPACITY:
            threshold = _INT_MAX
            break
        capacity *= 2
        threshold = int(capacity * _LOAD_FACTOR)
    return capacity, threshold


def _mutf8(text: str) -> bytes:
    """Java's modified UTF-8: NUL as C0 80, supplementary characters as surrogate pairs."""
    out = bytearray()
    for ch in text:
        cp = ord(ch)
        if 0 < cp < 0x80:
            out.append(cp)
        elif cp < 0x800:  # includes U+0000
            out += bytes((0xC0 | (cp >> 6), 0x80 | (cp & 0x3F)))
        elif cp < 0x10000:
            out += bytes((0xE0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3F), 0x80 | (cp & 0x3F)))
        else:
            cp -= 0x10000
            for unit in (0xD800 | (cp >> 10), 0xDC00 | (cp & 0x3FF)):
                out += bytes((0xE0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3F), 0x80 | (unit & 0x3F)))
    return bytes(out)


def _utf(text: str) -> bytes:
    data = _mutf8(text)
    if len(data) > 0xFFFF:
        raise JavaSerializationError("string too long for writeUTF")
    return struct.pack(">H", len(data)) + data


def _as_bytes(value: Any, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be bytes, not {type(value).__name__}")


def dump_hashmap(entries: Mapping[bytes, bytes | None]) -> bytes:
    """Serialize ``entries`` as Java's ``ObjectOutputStream.writeObject(HashMap<byte[], byte[]>)``.

    Entries are written in the mapping's iteration order (Java would use the identity-hash
    order of its ``byte[]`` keys, which is arbitrary). A ``None`` value is Java ``null``;
    keys may not be ``None``.
    """
    size = len(entries)
    if size > _INT_MAX:
        raise JavaSerializationError("too many entries")
    capacity, threshold = hashmap_capacity_and_threshold(size)

    out = bytearray(struct.pack(">HH", STREAM_MAGIC, STREAM_VERSION))
    # TC_OBJECT, new class desc for java.util.HashMap (handle 0x7E0000)
    out += bytes((TC_OBJECT, TC_CLASSDESC))
    out += _utf(HASHMAP_CLASS)
    out += struct.pack(">Q", HASHMAP_SUID)
    out.append(SC_SERIALIZABLE | SC_WRITE_METHOD)
    out += struct.pack(">H", 2)
    out += b"F" + _utf("loadFactor")
    out += b"I" + _utf("threshold")
    out += bytes((TC_ENDBLOCKDATA, TC_NULL))  # no class annotation; no serializable superclass
    next_handle = BASE_WIRE_HANDLE + 2  # 0x7E0001 is the HashMap object itself
    # defaultWriteObject(): the non-transient fields, in descriptor order
    out += struct.pack(">fi", _LOAD_FACTOR, threshold)
    # HashMap.writeObject(): s.writeInt(buckets); s.writeInt(size) -> one 8-byte block
    out += bytes((TC_BLOCKDATA, 8))
    out += struct.pack(">ii", capacity, size)

    byte_array_desc_handle: int | None = None

    def write_array(value: bytes | None) -> None:
        nonlocal next_handle, byte_array_desc_handle
        if value is None:
            out.append(TC_NULL)
            return
        if len(value) > _INT_MAX:
            raise JavaSerializationError("byte array too long")
        out.append(TC_ARRAY)
        if byte_array_desc_handle is None:
            out.append(TC_CLASSDESC)
            out.extend(_utf(BYTE_ARRAY_CLASS))
            out.extend(struct.pack(">Q", BYTE_ARRAY_SUID))
            out.append(SC_SERIALIZABLE)
            out.extend(struct.pack(">H", 0))
            out.extend(bytes((TC_ENDBLOCKDATA, TC_NULL)))
            byte_array_desc_handle = next_handle
            next_handle += 1
        else:
            out.append(TC_REFERENCE)
            out.extend(struct.pack(">I", byte_array_desc_handle))
        next_handle += 1  # the array object itself
        out.extend(struct.pack(">i", len(value)))
        out.extend(value)

    for key, value in entries.items():
        if key is None:
            raise TypeError("keys may not be None")
        write_array(_as_bytes(key, "key"))
        write_array(None if value is None else _as_bytes(value, "value"))
    out.append(TC_ENDBLOCKDATA)
    return bytes(out)


# --------------------------------------------------------------------------- reading


@dataclass(eq=False)
class JavaClassDesc:
    name: str
    suid: int
    flags: int = 0
    # (typecode, field name, class name signature or None for primitives)
    fields: list[tuple[str, str, str | None]] = field(default_factory=list)
    annotations: list[Any] = field(default_factory=list)
    superclass: JavaClassDesc | None = None

    def hierarchy(self) -> list[JavaClassDesc]:
        """This class and its serializable superclasses, topmost superclass first."""
        chain: list[JavaClassDesc] = []
        desc: JavaClassDesc | None = self
        while desc is not None:
            chain.append(desc)
            desc = desc.superclass
        chain.reverse()
        return chain


@dataclass(eq=False)
class JavaClassData:
    """One class's slice of an object: field values and ``writeObject`` data."""

    desc: JavaClassDesc
    values: dict[str, Any] = field(default_factory=dict)
    # custom data written by writeObject/writeExternal: bytes (block data) and objects
    annotations: list[Any] = field(default_factory=list)


@dataclass(eq=False)
class JavaObject:
    desc: JavaClassDesc
    class_data: list[JavaClassData] = field(default_factory=list)

    def data_for(self, class_name: str) -> JavaClassData | None:
        for data in self.class_data:
            if data.desc.name == class_name:
                return data
        return None


@dataclass(eq=False)
class JavaEnum:
    desc: JavaClassDesc
    constant: str


@dataclass(eq=False)
class JavaClass:
    desc: JavaClassDesc


@dataclass(frozen=True)
class _BlockData:
    data: bytes


class _EndBlock:
    pass


_END_BLOCK = _EndBlock()
_UNSET = object()

_PRIMITIVES: dict[str, tuple[str, int]] = {
    "B": (">b", 1),
    "C": (">H", 2),
    "D": (">d", 8),
    "F": (">f", 4),
    "I": (">i", 4),
    "J": (">q", 8),
    "S": (">h", 2),
    "Z": (">?", 1),
}


def _decode_mutf8(data: bytes) -> str:
    units: list[int] = []
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            units.append(b)
            i += 1
        elif b & 0xE0 == 0xC0 and i + 1 < n and data[i + 1] & 0xC0 == 0x80:
            units.append(((b & 0x1F) << 6) | (data[i + 1] & 0x3F))
            i += 2
        elif b & 0xF0 == 0xE0 and i + 2 < n and data[i + 1] & 0xC0 == 0x80 and data[i + 2] & 0xC0 == 0x80:
            units.append(((b & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F))
            i += 3
        else:
            raise JavaSerializationError(f"malformed modified UTF-8 at byte {i}")
    # combine UTF-16 surrogate pairs (lone surrogates are kept as they are)
    raw = struct.pack(f"<{len(units)}H", *units)
    return raw.decode("utf-16-le", errors="surrogatepass")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.pos = 0
        self.handles: list[Any] = []
        self.depth = 0

    # -- primitives
    def take(self, n: int) -> bytes:
        if n < 0:
            raise JavaSerializationError(f"negative length {n}")
        end = self.pos + n
        if end > len(self.data):
            raise TruncatedStreamError(
                f"unexpected end of stream at byte {len(self.data)} (needed {n} bytes at {self.pos})"
            )
        chunk = bytes(self.data[self.pos : end])
        self.pos = end
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def unpack(self, fmt: str, size: int) -> Any:
        return struct.unpack(fmt, self.take(size))[0]

    def peek(self) -> int:
        if self.pos >= len(self.data):
            raise TruncatedStreamError(f"unexpected end of stream at byte {self.pos}")
        return self.data[self.pos]

    def utf(self) -> str:
        return _decode_mutf8(self.take(self.unpack(">H", 2)))

    def long_utf(self) -> str:
        length = self.unpack(">Q", 8)
        if length > len(self.data):
            raise TruncatedStreamError("long string longer than the stream")
        return _decode_mutf8(self.take(length))

    # -- handles
    def new_handle(self, obj: Any) -> int:
        self.handles.append(obj)
        return len(self.handles) - 1

    def set_handle(self, index: int, obj: Any) -> None:
        self.handles[index] = obj

    def reference(self) -> Any:
        handle = self.unpack(">I", 4)
        index = handle - BASE_WIRE_HANDLE
        if not 0 <= index < len(self.handles):
            raise JavaSerializationError(f"invalid handle 0x{handle:X}")
        obj = self.handles[index]
        if obj is _UNSET:
            raise JavaSerializationError(f"reference to incomplete object 0x{handle:X}")
        return obj

    # -- grammar
    def content(self, allow_block: bool = False) -> Any:
        """One ``content`` element; block data only where ``allow_block``."""
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise JavaSerializationError("object graph nested too deeply")
        try:
            while True:
                tc = self.u8()
                if tc == TC_RESET:
                    self.handles.clear()
                    continue
                return self._dispatch(tc, allow_block)
        finally:
            self.depth -= 1

    def _dispatch(self, tc: int, allow_block: bool) -> Any:
        if tc == TC_NULL:
            return None
        if tc == TC_REFERENCE:
            return self.reference()
        if tc == TC_OBJECT:
            return self.new_object()
        if tc == TC_ARRAY:
            return self.new_array()
        if tc == TC_STRING:
            text = self.utf()
            self.new_handle(text)
            return text
        if tc == TC_LONGSTRING:
            text = self.long_utf()
            self.new_handle(text)
            return text
        if tc == TC_CLASSDESC:
            return self.new_class_desc()
        if tc == TC_CLASS:
            cls = JavaClass(self.required_class_desc("class"))
            self.new_handle(cls)
            return cls
        if tc == TC_ENUM:
            desc = self.required_class_desc("enum constant")
            index = self.new_handle(_UNSET)
            name = self.content()
            if not isinstance(name, str):
                raise JavaSerializationError("enum constant name is not a string")
            value = JavaEnum(desc, name)
            self.set_handle(index, value)
            return value
        if allow_block and tc == TC_BLOCKDATA:
            return _BlockData(self.take(self.u8()))
        if allow_block and tc == TC_BLOCKDATALONG:
            return _BlockData(self.take(self.unpack(">i", 4)))
        if allow_block and tc == TC_ENDBLOCKDATA:
            return _END_BLOCK
        if tc == TC_PROXYCLASSDESC:
            raise JavaSerializationError("proxy class descriptors are not supported")
        if tc == TC_EXCEPTION:
            raise JavaSerializationError("the stream contains a serialized exception")
        raise JavaSerializationError(f"unexpected type code 0x{tc:02X} at byte {self.pos - 1}")

    def annotations(self) -> list[Any]:
        """``contents`` up to and including TC_ENDBLOCKDATA."""
        items: list[Any] = []
        while True:
            item = self.content(allow_block=True)
            if item is _END_BLOCK:
                return items
            items.append(item)

    def class_desc(self) -> JavaClassDesc | None:
        """``classDesc``: a new descriptor, null, or a reference to one."""
        desc = self.content()
        if desc is not None and not isinstance(desc, JavaClassDesc):
            raise JavaSerializationError("expected a class descriptor")
        return desc

    def required_class_desc(self, what: str) -> JavaClassDesc:
        """A ``classDesc`` that may not be null (that of a class or enum constant)."""
        desc = self.class_desc()
        if desc is None:
            raise JavaSerializationError(f"the class descriptor of a {what} is null")
        return desc

    def new_class_desc(self) -> JavaClassDesc:
        name = self.utf()
        suid = self.unpack(">Q", 8)
        desc = JavaClassDesc(name, suid)
        self.new_handle(desc)
        desc.flags = self.u8()
        for _ in range(self.unpack(">H", 2)):
            typecode = chr(self.u8())
            field_name = self.utf()
            if typecode in _PRIMITIVES:
                desc.fields.append((typecode, field_name, None))
            elif typecode in ("L", "["):
                signature = self.content()
                if not isinstance(signature, str):
                    raise JavaSerializationError(f"field {field_name}: class name is not a string")
                desc.fields.append((typecode, field_name, signature))
            else:
                raise JavaSerializationError(f"field {field_name}: unknown type code {typecode!r}")
        desc.annotations = self.annotations()
        desc.superclass = self.class_desc()
        return desc

    def new_object(self) -> JavaObject:
        desc = self.class_desc()
        if desc is None:
            raise JavaSerializationError("object with a null class descriptor")
        obj = JavaObject(desc)
        self.new_handle(obj)
        for cls in desc.hierarchy():
            data = JavaClassData(cls)
            obj.class_data.append(data)
            if cls.flags & SC_EXTERNALIZABLE:
                if not cls.flags & SC_BLOCK_DATA:
                    raise JavaSerializationError(
                        f"{cls.name}: externalizable data in protocol version 1 is not supported"
                    )
                data.annotations = self.annotations()
            elif cls.flags & SC_SERIALIZABLE:
                for typecode, field_name, _sig in cls.fields:
                    if typecode in _PRIMITIVES:
                        fmt, size = _PRIMITIVES[typecode]
                        data.values[field_name] = self.unpack(fmt, size)
                    else:
                        data.values[field_name] = self.content()
                if cls.flags & SC_WRITE_METHOD:
                    data.annotations = self.annotations()
        return obj

    def new_array(self) -> Any:
        desc = self.class_desc()
        if desc is None or not desc.name.startswith("["):
            raise JavaSerializationError("array with a non-array class descriptor")
        index = self.new_handle(_UNSET)
        length = self.unpack(">i", 4)
        if length < 0:
            raise JavaSerializationError(f"negative array length {length}")
        component = desc.name[1:2]
        value: Any
        if component == "B":
            value = self.take(length)
        elif component in _PRIMITIVES:
            fmt, size = _PRIMITIVES[component]
            raw = self.take(length * size)
            value = list(struct.unpack(f">{length}{fmt[1]}", raw))
        else:
            if length > len(self.data) - self.pos:  # each element takes at least one byte
                raise TruncatedStreamError("array longer than the stream")
            items: list[Any] = []
            self.set_handle(index, items)  # elements may refer back to the array
            for _ in range(length):
                items.append(self.content())
            value = items
        self.set_handle(index, value)
        return value


def _read_object(data: bytes) -> Any:
    reader = _Reader(data)
    magic, version = reader.unpack(">H", 2), reader.unpack(">H", 2)
    if magic != STREAM_MAGIC:
        raise JavaSerializationError(f"not a Java serialization stream (magic 0x{magic:04X})")
    if version != STREAM_VERSION:
        raise JavaSerializationError(f"unsupported stream version {version}")
    return reader.content()


def load_hashmap(data: bytes) -> dict[bytes, bytes | None]:
    """Read a serialized ``HashMap<byte[], byte[]>`` (or subclass) into a dict.

    Entries keep the stream's order; a later duplicate key wins. Java ``null`` values
    become ``None``. An entry with a ``null`` key cannot be represented and is skipped
    with a warning (Kafka never writes one). Raises :class:`TruncatedStreamError` when
    the stream ends early (including empty input) and :class:`JavaSerializationError`
    for anything else that is not such a map.
    """
    obj = _read_object(bytes(data))
    if not isinstance(obj, JavaObject):
        raise JavaSerializationError(f"expected a java.util.HashMap, found {_describe(obj)}")
    slice_ = obj.data_for(HASHMAP_CLASS)
    if slice_ is None:
        raise JavaSerializationError(f"expected a java.util.HashMap, found {obj.desc.name}")
    block = b"".join(item.data for item in slice_.annotations if isinstance(item, _BlockData))
    objects = [item for item in slice_.annotations if not isinstance(item, _BlockData)]
    if len(block) < 8:
        raise JavaSerializationError("HashMap data lacks its capacity and size")
    _capacity, size = struct.unpack(">ii", block[:8])
    if size < 0:
        raise JavaSerializationError(f"invalid HashMap size {size}")
    if len(objects) < 2 * size:
        raise JavaSerializationError(f"HashMap declares {size} entries but holds {len(objects) // 2}")
    result: dict[bytes, bytes | None] = {}
    for i in range(size):
        key, value = objects[2 * i], objects[2 * i + 1]
        if value is not None and not isinstance(value, bytes):
            raise JavaSerializationError(f"entry {i}: value is {_describe(value)}, not byte[]")
        if key is None:
            log.warning("Skipping a HashMap entry with a null key")
            continue
        if not isinstance(key, bytes):
            raise JavaSerializationError(f"entry {i}: key is {_describe(key)}, not byte[]")
        result[key] = value
    return result


def _describe(obj: Any) -> str:
    if obj is None:
        return "null"
    if isinstance(obj, JavaObject):
        return obj.desc.name
    if isinstance(obj, str):
        return "java.lang.String"
    if isinstance(obj, JavaEnum):
        return f"enum {obj.desc.name}"
    if isinstance(obj, JavaClass):
        return "java.lang.Class"
    if isinstance(obj, JavaClassDesc):
        return "a class descriptor"
    return "an array"
