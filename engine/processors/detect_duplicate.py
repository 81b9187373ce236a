"""DetectDuplicate: routes FlowFiles whose identifier was already seen to 'duplicate'."""

from __future__ import annotations

import time

import msgpack

from engine.components import (
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.expression import ExpressionError
from engine.services.apis import DistributedMapCacheClient

CACHE_ENTRY_IDENTIFIER = PropertyDescriptor(
    "Cache Entry Identifier", description="The value that identifies duplicates (an expression over the "
    "FlowFile's attributes); it is the key cached.", required=True, default="${hash.value}",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
FLOWFILE_DESCRIPTION = PropertyDescriptor(
    "FlowFile Description", description="Text cached with the identifier; a later duplicate gets it in its "
    "'original.flowfile.description' attribute (an expression over the FlowFile's attributes).", required=True,
    default="", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
AGE_OFF_DURATION = PropertyDescriptor(
    "Age Off Duration", description="How long a cached identifier counts; an older entry is replaced and the "
    "FlowFile is not a duplicate. Unset: entries never age off.", validators=[v.TIME_PERIOD])
DISTRIBUTED_CACHE_SERVICE = PropertyDescriptor(
    "Distributed Cache Service", description="The map cache client that holds the identifiers seen.",
    required=True, service=DistributedMapCacheClient)
CACHE_THE_ENTRY_IDENTIFIER = PropertyDescriptor(
    "Cache The Entry Identifier", description="Whether to cache the identifier of a FlowFile not seen before; "
    "when false the processor only looks identifiers up, and something else must cache them.",
    default="true", allowed_values=["true", "false"])

DUPLICATE = Relationship("duplicate", "FlowFiles whose identifier was found in the cache")
NON_DUPLICATE = Relationship("non-duplicate", "FlowFiles whose identifier was not found in the cache")
FAILURE = Relationship("failure", "FlowFiles without an identifier, or that met a cache failure; penalized")

ORIGINAL_DESCRIPTION = "original.flowfile.description"
_BATCH = 100
_FORMAT = 1


class DetectDuplicate(Processor):
    """Looks each FlowFile's Cache Entry Identifier up in a map cache and routes the FlowFile to
    'duplicate' when it is there, to 'non-duplicate' otherwise (caching it, unless Cache The
    Entry Identifier is false).

    The cached value holds the FlowFile Description and the time the entry was cached
    (Flowsite's own encoding, msgpack). A duplicate gets the description of the FlowFile that
    was cached first in 'original.flowfile.description'. With Age Off Duration, an entry older
    than that is removed and the FlowFile is treated as new. A value some other component
    stored under the key (not in this processor's encoding) counts as a duplicate whose
    description is the value as text and whose age is unknown, so it never ages off.

    The look-up and the caching are one atomic get-and-put-if-absent on the cache, so of two
    FlowFiles with the same identifier processed at once, even on different nodes sharing one
    cache, exactly one is 'non-duplicate'. A FlowFile whose identifier evaluates to blank is
    penalized and routed to failure. When the cache cannot be reached the FlowFile is penalized
    and routed to failure, the rest of the batch goes back to the queue, and the processor
    yields. Each routed FlowFile gets a ROUTE provenance event. Delivery is at least once: after
    a crash between caching and committing, the FlowFile is processed again and is then a
    duplicate of itself.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.DetectDuplicate"
    tags = ("hash", "dupe", "duplicate", "dedupe")
    properties = (CACHE_ENTRY_IDENTIFIER, FLOWFILE_DESCRIPTION, AGE_OFF_DURATION, DISTRIBUTED_CACHE_SERVICE,
                  CACHE_THE_ENTRY_IDENTIFIER)
    relationships = (DUPLICATE, NON_DUPLICATE, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    writes_attributes = (WrittenAttribute(ORIGINAL_DESCRIPTION,
                                          "On duplicates: the FlowFile Description of the FlowFile cached first"),)
    see_also = ("MapCacheClientService", "MapCacheServer", "RedisDistributedMapCacheClientService")

    def on_scheduled(self, context):
        self._identifier = context.property(CACHE_ENTRY_IDENTIFIER)
        self._description = context.property(FLOWFILE_DESCRIPTION)
        age_off = context.property(AGE_OFF_DURATION)
        self._age_off_ms = int(age_off.as_duration() * 1000) if age_off.is_set() else None
        self._cache_identifier = context.property(CACHE_THE_ENTRY_IDENTIFIER).as_bool()

    def on_trigger(self, context, session):
        flowfiles = session.get_batch(_BATCH)
        if not flowfiles:
            return
        cache: DistributedMapCacheClient = context.property(DISTRIBUTED_CACHE_SERVICE).as_service()
        for index, flowfile in enumerate(flowfiles):
            try:
                key = (self._identifier.evaluate(flowfile).value or "").strip()
                description = self._description.evaluate(flowfile).value or ""
            except ExpressionError as error:
                context.logger.error("cannot evaluate the properties for %s: %s; routing to failure",
                                     flowfile.uuid, error)
                session.transfer(session.penalize(flowfile), FAILURE)
                continue
            if not key:
                context.logger.error("the Cache Entry Identifier of %s is blank; routing to failure", flowfile.uuid)
                session.transfer(session.penalize(flowfile), FAILURE)
                continue
            try:
                original = self._look_up(cache, key, description)
            except OSError as error:
                context.logger.error("cannot use the cache for %s: %s; routing to failure and yielding",
                                     flowfile.uuid, error)
                session.transfer(session.penalize(flowfile), FAILURE)
                for untouched in flowfiles[index + 1:]:
                    session.transfer(untouched)
                context.yield_processor()
                return
            if original is None:
                session.provenance.route(flowfile, NON_DUPLICATE.name)
                session.transfer(flowfile, NON_DUPLICATE)
            else:
                flowfile = session.put_attribute(flowfile, ORIGINAL_DESCRIPTION, original)
                session.provenance.route(flowfile, DUPLICATE.name, details=f"Duplicate of: {original}")
                session.transfer(flowfile, DUPLICATE)

    def _look_up(self, cache: DistributedMapCacheClient, key: str, description: str) -> str | None:
        """The description of the entry cached under ``key`` (None: not a duplicate), caching this
        FlowFile's entry when asked to."""
        now = int(time.time() * 1000)
        entry = _encode(description, now)
        found = cache.get_and_put_if_absent(key, entry) if self._cache_identifier else cache.get(key)
        if found is None:
            return None
        original, cached_at = _decode(found)
        if self._age_off_ms is None or cached_at is None or now < cached_at + self._age_off_ms:
            return original
        cache.remove(key)
        if self._cache_identifier:
            return None if cache.put_if_absent(key, entry) else original
        return original if cache.contains_key(key) else None


def _encode(description: str, cached_at_ms: int) -> bytes:
    return msgpack.packb([_FORMAT, cached_at_ms, description])


def _decode(value: bytes) -> tuple[str, int | None]:
    """(description, time cached in epoch milliseconds) of a cached value; a value in another
    encoding is its own description, of unknown age."""
    try:
        decoded = msgpack.unpackb(value, raw=False)
    except (ValueError, TypeError, msgpack.UnpackException):
        decoded = None
    if (isinstance(decoded, list) and len(decoded) == 3 and decoded[0] == _FORMAT
            and isinstance(decoded[1], int) and isinstance(decoded[2], str)):
        return decoded[2], decoded[1]
    return value.decode("utf-8", errors="replace"), None
