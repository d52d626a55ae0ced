"""The transformation chain of a connector: Kafka's ``TransformationChain`` and
``TransformationStage``, built from a connector config the way ``ConnectorConfig`` does.

Config syntax (Kafka Connect's)::

    transforms=route,drop                     # ordered, unique aliases
    transforms.route.type=<class or alias>    # required
    transforms.route.<key>=...                # the transformation's own keys
    transforms.drop.predicate=isTomb          # optional predicate alias ...
    transforms.drop.negate=true               # ... optionally negated (needs a predicate)
    predicates=isTomb
    predicates.isTomb.type=<class or alias>
    predicates.isTomb.<key>=...

Each stage applies its transformation to a record when it has no predicate, or when the
predicate's answer differs from ``negate``; a transformation returning ``None`` drops the
record and ends the chain. Every stage gets its own predicate instance, as in Kafka.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sluice.api.config import NO_DEFAULT, ConfigDef, ConfigType, Importance, LambdaValidator, Width, parse_type
from sluice.api.errors import ConfigError, ConnectError
from sluice.api.records import ConnectRecord, SinkBatch
from sluice.api.transforms import Predicate, Transformation

__all__ = ["TransformationChain", "TransformationStage"]

log = logging.getLogger(__name__)

TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
TYPE_CONFIG = "type"
PREDICATE_CONFIG = "predicate"
NEGATE_CONFIG = "negate"

LoadClass = Callable[[str, str], type]
"""``load_class(kind, class_name)``: the class a ``type`` value names; ``kind`` is
``"transformation"`` or ``"predicate"``."""


class TransformationStage:
    """One transformation, with the predicate (if any) that decides which records it applies to."""

    __slots__ = ("alias", "transformation", "predicate", "predicate_alias", "negate")

    def __init__(
        self,
        transformation: Transformation,
        predicate: Predicate | None = None,
        negate: bool = False,
        alias: str | None = None,
        predicate_alias: str | None = None,
    ) -> None:
        self.alias = alias
        self.transformation = transformation
        self.predicate = predicate
        self.predicate_alias = predicate_alias
        self.negate = bool(negate)

    @property
    def transform_class(self) -> type:
        return type(self.transformation)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        predicate = self.predicate
        if predicate is None or (not predicate.test(record)) is self.negate:
            return self.transformation.apply(record)
        return record

    def apply_batch(self, batch: SinkBatch) -> SinkBatch | None:
        """The stage on a whole sink batch, or ``None`` when its transformation or
        predicate has no batch form for it (see ``Transformation.apply_batch``)."""
        predicate = self.predicate
        if predicate is None:
            return self.transformation.apply_batch(batch)
        answers = predicate.test_batch(batch)
        if answers is None or len(answers) != len(batch):
            return None
        negate = self.negate
        picked = [bool(answer) is not negate for answer in answers]
        chosen = [i for i, pick in enumerate(picked) if pick]
        if not chosen:
            return batch
        if len(chosen) == len(batch):
            return self.transformation.apply_batch(batch)
        out = self.transformation.apply_batch(batch.take(chosen))
        if out is None:
            return None
        if not len(out):  # the chosen records dropped: the others go on
            return batch.take([i for i, pick in enumerate(picked) if not pick])
        if len(out) != len(chosen):
            return None  # some kept, some dropped: not worth merging here
        merged: dict[str, list[Any]] = {}
        for name in SinkBatch.COLUMNS:
            column = list(getattr(batch, name))
            for i, value in zip(chosen, getattr(out, name), strict=True):
                column[i] = value
            merged[name] = column
        return SinkBatch.from_columns(merged)

    def close(self) -> None:
        _close_quietly(self.transformation, "transformation")
        if self.predicate is not None:
            _close_quietly(self.predicate, "predicate")

    def __repr__(self) -> str:
        return (
            f"TransformationStage{{alias={self.alias}, predicate={self.predicate!r}, "
            f"transformation={self.transformation!r}, negate={'true' if self.negate else 'false'}}}"
        )


def _close_quietly(plugin: Any, what: str) -> None:
    try:
        plugin.close()
    except Exception:
        log.warning("Failed to close %s %s", what, type(plugin).__name__, exc_info=True)


class TransformationChain:
    """The transformations of a connector, applied to each record in order.

    :meth:`apply` raises whatever a transformation or predicate raises (the runtime
    decides, through ``errors.tolerance``, whether the record is skipped); the error gets
    ``transformation_alias`` and ``transformation_class`` attributes naming the stage that
    failed, unless it already has them.
    """

    __slots__ = ("_stages", "_plan", "_closed")

    def __init__(self, stages: Iterable[TransformationStage] = ()) -> None:
        self._stages = tuple(stages)
        # Per stage: the bound methods the record loop calls, so it does no lookups.
        self._plan = tuple(
            (s.transformation.apply, s.predicate.test if s.predicate is not None else None, s.negate, s)
            for s in self._stages
        )
        self._closed = False

    @classmethod
    def from_connector_config(cls, config: Mapping[str, Any], load_class: LoadClass) -> TransformationChain:
        """Build and configure the chain a connector config describes.

        Raises :class:`~sluice.api.errors.ConfigError` for an invalid ``transforms`` or
        ``predicates`` setting, in Kafka's words where Kafka has them: duplicate aliases,
        a missing or unknown ``type``, a class of the wrong kind, ``negate`` without
        ``predicate``, a predicate alias not listed in ``predicates``, a missing or invalid
        key of a transformation or predicate. Whatever a plugin's ``configure`` raises is
        raised as is. Nothing is left open when building fails.
        """
        transform_aliases = _aliases(config, TRANSFORMS_CONFIG)
        predicate_aliases = _aliases(config, PREDICATES_CONFIG)
        if not transform_aliases and not predicate_aliases:
            return cls()
        classes: dict[tuple[str, str], type] = {}
        enriched = ConfigDef()
        for kind, list_key, aliases in (
            ("transformation", TRANSFORMS_CONFIG, transform_aliases),
            ("predicate", PREDICATES_CONFIG, predicate_aliases),
        ):
            for alias in aliases:
                prefix = f"{list_key}.{alias}."
                plugin_class = _load(config, prefix + TYPE_CONFIG, kind, load_class)
                classes[(kind, alias)] = plugin_class
                _define_alias(enriched, config, kind, alias, prefix, plugin_class)
        # Every key of every alias is checked before anything is configured, as Kafka
        # does when it builds the ConnectorConfig.
        enriched.parse(config)

        stages: list[TransformationStage] = []
        try:
            for alias in transform_aliases:
                prefix = f"{TRANSFORMS_CONFIG}.{alias}."
                transformation = classes[("transformation", alias)]()
                own = _with_prefix(config, prefix)
                predicate_alias = own.pop(PREDICATE_CONFIG, None)
                negate = own.pop(NEGATE_CONFIG, None)
                stage = TransformationStage(transformation, alias=alias)
                stages.append(stage)  # closed on failure from here on
                transformation.configure(own)
                if predicate_alias is None:
                    continue
                if predicate_alias not in predicate_aliases:
                    raise ConfigError(
                        f"Unknown configuration 'predicates.{predicate_alias}.type': "
                        f"'{prefix}{PREDICATE_CONFIG}' names the predicate '{predicate_alias}', "
                        f"which is not listed in '{PREDICATES_CONFIG}'"
                    )
                predicate = classes[("predicate", predicate_alias)]()
                stage.predicate = predicate
                stage.predicate_alias = predicate_alias
                # Read as Kafka does (Boolean.parseBoolean of the value as given).
                stage.negate = negate is not None and str(negate).lower() == "true"
                predicate.configure(_with_prefix(config, f"{PREDICATES_CONFIG}.{predicate_alias}."))
        except BaseException:
            for stage in stages:
                stage.close()
            raise
        return cls(stages)

    # -- per record -----------------------------------------------------------------

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        """The record after every stage, or ``None`` once a transformation drops it."""
        plan = self._plan
        if not plan:
            return record
        stage = None
        try:
            for step in plan:
                apply, test, negate, stage = step  # stage: which one failed, for the error
                if test is None or (not test(record)) is negate:
                    transformed = apply(record)
                    if transformed is None:
                        return None
                    record = transformed
            return record
        except Exception as e:
            if stage is not None and not hasattr(e, "transformation_alias"):
                try:
                    e.transformation_alias = stage.alias  # type: ignore[attr-defined]
                    e.transformation_class = _class_path(stage.transform_class)  # type: ignore[attr-defined]
                except AttributeError:
                    pass
            raise

    # -- per batch (sink connectors) ----------------------------------------------------

    def apply_batch(self, batch: SinkBatch) -> SinkBatch | None:
        """The sink batch after every stage, when each stage took it whole (its
        transformation's ``apply_batch`` and its predicate's ``test_batch``); ``None``
        when one could not — the caller then applies the chain record by record, which
        also reports any failure under the error policy."""
        try:
            for stage in self._stages:
                out = stage.apply_batch(batch)
                if out is None:
                    return None
                batch = out
                if not len(batch):
                    break
            return batch
        except Exception:  # a batch form broke its promise: the records decide
            log.debug("A batch form of %r raised; applying the chain per record", self, exc_info=True)
            return None

    # -- lifecycle and introspection ----------------------------------------------------

    def close(self) -> None:
        """Close every transformation and predicate, once; errors are logged, not raised."""
        if self._closed:
            return
        self._closed = True
        for stage in self._stages:
            stage.close()

    @property
    def is_empty(self) -> bool:
        return not self._plan

    @property
    def stages(self) -> tuple[TransformationStage, ...]:
        return self._stages

    def __len__(self) -> int:
        return len(self._stages)

    def __bool__(self) -> bool:
        return True  # a chain is a chain even when empty; use is_empty

    def __repr__(self) -> str:
        return "TransformationChain{" + ", ".join(_class_path(s.transform_class) for s in self._stages) + "}"


# -- building -----------------------------------------------------------------------------


def _class_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _aliases(config: Mapping[str, Any], key: str) -> list[str]:
    if key not in config:
        return []
    value = parse_type(key, config[key], ConfigType.LIST)
    if value is None:
        raise ConfigError(key, "null", "entry must be non null")
    aliases = [str(a) for a in value]
    if len(set(aliases)) != len(aliases):
        raise ConfigError(key, "[" + ", ".join(aliases) + "]", "Duplicate alias provided.")
    return aliases


def _with_prefix(config: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The keys under ``prefix``, prefix stripped (Kafka's ``originalsWithPrefix``)."""
    n = len(prefix)
    return {k[n:]: v for k, v in config.items() if k.startswith(prefix)}


_INTERFACES = {"transformation": Transformation, "predicate": Predicate}
_INTERFACE_NAMES = {"transformation": "Transformation", "predicate": "Predicate"}


def _load(config: Mapping[str, Any], type_key: str, kind: str, load_class: LoadClass) -> type:
    raw = config.get(type_key)
    if raw is None:
        raise ConfigError(type_key, "null", f"Not a {_INTERFACE_NAMES[kind]}")
    name = parse_type(type_key, raw, ConfigType.CLASS)
    try:
        plugin_class = load_class(kind, name)
    except ConfigError:
        raise
    except Exception as e:
        raise ConfigError(type_key, name, f"Class {name} could not be found.") from e
    interface = _INTERFACES[kind]
    if not inspect.isclass(plugin_class) or not issubclass(plugin_class, interface):
        raise ConfigError(f"Class class {name} does not implement the {_INTERFACE_NAMES[kind]} interface")
    if inspect.isabstract(plugin_class):
        concrete = [_class_path(c) for c in plugin_class.__subclasses__() if not inspect.isabstract(c)]
        message = "This class is abstract and cannot be created."
        if concrete:
            message += " Did you mean " + ", ".join(concrete) + "?"
        raise ConfigError(message)
    return plugin_class


def _define_alias(
    enriched: ConfigDef, config: Mapping[str, Any], kind: str, alias: str, prefix: str, plugin_class: type
) -> None:
    """Add the keys of one alias to ``enriched``, as Kafka's ``ConnectorConfig.enrich``:
    ``type``, then (for a transformation) ``predicate`` and ``negate``, then the plugin's
    own keys, all under ``prefix``."""
    interface = _INTERFACE_NAMES[kind]
    group = f"{'Transforms' if kind == 'transformation' else 'Predicates'}: {alias}"

    def check(name: str, value: Any) -> None:
        negate, predicate = prefix + NEGATE_CONFIG, prefix + PREDICATE_CONFIG
        if kind == "transformation" and negate in config and predicate not in config:
            raise ConfigError(
                f"Config '{negate}' was provided but there is no config '{predicate}' "
                "defining a predicate to be negated."
            )

    type_key = prefix + TYPE_CONFIG
    enriched.define(
        type_key, ConfigType.CLASS, NO_DEFAULT, LambdaValidator.with_(check, f"valid configs for {alias} {kind}"),
        Importance.HIGH, f"Class for the '{alias}' {kind}.", group, 0, Width.LONG, f"{interface} type for {alias}",
    )  # fmt: skip
    try:
        own = plugin_class().config()
    except Exception as e:
        raise ConfigError(
            type_key, config.get(type_key), f"Error getting config definition from {interface}: {e}"
        ) from e
    if own is None:
        raise ConnectError(f"{_class_path(plugin_class)}.config() must return a ConfigDef that is not null.")
    child = ConfigDef()
    if kind == "transformation":
        child.define(
            PREDICATE_CONFIG,
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Alias of the predicate that decides which records this transformation applies to.",
        )
        child.define(
            NEGATE_CONFIG,
            ConfigType.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Whether to apply the transformation to the records the predicate does not match instead.",
        )
    for key in own.config_keys().values():
        if kind == "transformation" and key.name in (PREDICATE_CONFIG, NEGATE_CONFIG):
            log.warning("Transformer config %s is masked by implicit config of that name", key.name)
            continue
        child.define_key(key)
    enriched.embed(prefix, group, 1, child)
