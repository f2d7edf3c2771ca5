"""The nearby search of query (only when the server has geo on).

One `detect_geo` LLM call lists the places the question mentions; it runs on
every query. Only when the caller asked for the nearby search
(`geo_nearby` / `geo_radius_km`): the places the resolver finds, and the
matched entities that have coordinates, are the anchors; the geo entities
within the radius of each anchor (one geo query per anchor) and the live
edges around them join the context; the question's resolved places are
stored as entities with coordinates, so that later questions find them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import clock
from ..ai import prompts
from ..ai.jsonreply import parse_json_object
from ..ai.port import LLMRequest
from ..config import Settings
from ..errors import UpstreamError
from ..graph.port import GraphStore
from ..memory.remember import GeoResolver
from ..models import DatasetKey, Edge, Entity, GraphWrite
from ..records.meter import Meter
from ..text import normalize_name
from ..vectors.port import VectorIndex, VectorItem, write_first

if TYPE_CHECKING:
    from ..memory.retrieve import QueryInput

DETECT_GEO_STAGE = "detect_geo"
DETECT_GEO_MAX_TOKENS = 512
MAX_PLACES = 10  # places of one question looked up (a bound on the work)
NEARBY_PER_ANCHOR = 25
EDGE_CAP = 100
PLACE_TYPE = "place"


@dataclass
class Anchor:
    name: str
    lat: float
    lon: float
    entity_id: int

    def public(self) -> dict[str, Any]:
        return {"name": self.name, "lat": self.lat, "lon": self.lon, "entity_id": self.entity_id}


class NearbySearch:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorIndex,
        settings: Settings,
        resolver: GeoResolver | None,
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.settings = settings
        self.resolver = resolver

    # ------------------------------------------------------------- detect
    def detect_places(self, question: str, inp: QueryInput, meter: Meter) -> list[str]:
        """The places the question mentions, as written (the `detect_geo`
        call), distinct by normalized name, at most MAX_PLACES."""
        opts = inp.options
        reply = meter.complete(
            LLMRequest(
                DETECT_GEO_STAGE,
                prompts.DETECT_GEO_SYSTEM,
                question,
                opts.model(DETECT_GEO_STAGE),
                opts.level(DETECT_GEO_STAGE),
                DETECT_GEO_MAX_TOKENS,
                prompts.DETECT_GEO_SCHEMA,
            )
        )
        try:
            data = parse_json_object(reply.text)
        except UpstreamError:
            meter.reject(DETECT_GEO_STAGE, "unparsable reply")
            raise
        raw = data.get("places")
        if not isinstance(raw, list):
            meter.reject(DETECT_GEO_STAGE, "reply has no places list")
            raise UpstreamError("detect_geo reply lacks the places list")
        places: dict[str, str] = {}
        for item in raw:
            name = " ".join(item.split()) if isinstance(item, str) else ""
            norm = normalize_name(name)
            if norm and norm not in places:
                places[norm] = name
        return list(places.values())[:MAX_PLACES]

    # ------------------------------------------------------------- search
    def search(
        self, key: DatasetKey, inp: QueryInput, meter: Meter, matched_entities: list[Entity]
    ) -> tuple[dict[str, Any] | None, list[Edge]]:
        # No steps of its own: query times the whole search as its `nearby` step.
        places = self.detect_places(inp.query, inp, meter)
        radius = inp.geo_radius_km
        if radius is None:  # the caller did not ask for the nearby search
            return None, []
        radius = float(radius)

        resolved: list[tuple[str, float, float]] = []
        if self.resolver is not None:
            for name in places:
                coords = self.resolver.resolve(name)
                if coords is not None:
                    resolved.append((name, coords[0], coords[1]))
        anchors = self._store_places(key, resolved, meter) if resolved else []
        seen = {a.entity_id for a in anchors}
        for e in matched_entities:
            if e.lat is not None and e.lon is not None and e.id not in seen:
                seen.add(e.id)
                anchors.append(Anchor(e.name, e.lat, e.lon, e.id))
        if not anchors:
            return None, []

        best: dict[int, tuple[float, int]] = {}  # entity id -> (km, index of its anchor)
        for i, a in enumerate(anchors):
            for h in self.vectors.nearby(key, a.lat, a.lon, radius, NEARBY_PER_ANCHOR):
                if h.id in seen:  # an anchor is not its own neighbour
                    continue
                if h.id not in best or h.distance_km < best[h.id][0]:
                    best[h.id] = (h.distance_km, i)
        rows = self.graph.get_entities(key, sorted(best)) if best else {}
        # A vector whose row is gone (or has no coordinates) is dropped.
        found = sorted(
            (km, eid, ai)
            for eid, (km, ai) in best.items()
            if eid in rows and rows[eid].lat is not None and rows[eid].lon is not None
        )
        entities = [rows[eid] for _, eid, _ in found]
        edges = (
            self.graph.live_edges_around(key, [e.id for e in entities], EDGE_CAP)
            if entities
            else []
        )

        nearby = [
            {
                "id": rows[eid].id,
                "name": rows[eid].name,
                "type": rows[eid].type,
                "distance_km": round(km, 1),
                "anchor": anchors[ai].name,
                "lat": rows[eid].lat,
                "lon": rows[eid].lon,
            }
            for km, eid, ai in found
        ]
        out: dict[str, Any] = {
            "radius_km": radius,
            "anchors": [a.public() for a in anchors],
            "nearby": nearby,
            "_entities": entities,  # for the context; query pops it
        }
        return out, edges

    # ------------------------------------------------------------- storage
    def _store_places(
        self, key: DatasetKey, resolved: list[tuple[str, float, float]], meter: Meter
    ) -> list[Anchor]:
        """The question's resolved places as anchors, each an entity: an
        existing entity of the same normalized name is reused (with its own
        coordinates when it has some, left as it is otherwise), the others
        are created as places with coordinates."""
        norms = [normalize_name(name) for name, _, _ in resolved]
        existing_ids = self.graph.entity_ids_by_names(key, sorted(set(norms)))
        existing = (
            self.graph.get_entities(key, sorted(set(existing_ids.values()))) if existing_ids else {}
        )
        new = [
            (norm, name, lat, lon)
            for norm, (name, lat, lon) in zip(norms, resolved, strict=True)
            if existing_ids.get(norm) not in existing
        ]
        created = self._create(key, new, meter) if new else {}
        for made in created.values():
            existing[made.id] = made
        anchors: list[Anchor] = []
        for norm, (name, lat, lon) in zip(norms, resolved, strict=True):
            eid = created[norm].id if norm in created else existing_ids.get(norm)
            ent = existing.get(eid) if eid is not None else None
            if ent is None:  # its row vanished meanwhile (a deleted dataset)
                continue
            if ent.lat is not None and ent.lon is not None:
                lat, lon = ent.lat, ent.lon
            anchors.append(Anchor(name, lat, lon, ent.id))
        return anchors

    def _create(
        self, key: DatasetKey, new: list[tuple[str, str, float, float]], meter: Meter
    ) -> dict[str, Entity]:
        """Create the entities (normalized name -> entity). A name a concurrent
        call claimed first is that call's entity."""
        vectors = meter.embed([name for _, name, _, _ in new], "document").vectors
        first, _, _ = self.graph.allocate_ids(key, len(new), 0, 0)
        proposals = {norm: first + i for i, (norm, _, _, _) in enumerate(new)}
        txn = uuid.uuid4().hex  # the lease owner of this write
        try:
            owners = self.graph.claim_names(key, txn, proposals)
        except BaseException:
            self.graph.abort(key, txn)
            raise
        claimed = {n: i for n, i in proposals.items() if owners.get(n) == i}
        now = clock.now_str()
        out: dict[str, Entity] = {}
        items: list[VectorItem] = []
        write = GraphWrite(txn=txn, now=now)
        for (norm, name, lat, lon), vec in zip(new, vectors, strict=True):
            if norm not in claimed:
                continue
            ent = Entity(claimed[norm], name, PLACE_TYPE, "", now, now, lat, lon)
            write.new_entities.append(ent)
            items.append(VectorItem(ent.id, vec, lat, lon))
            out[norm] = ent
        try:
            if items:
                write.vectors["entities"] = items
                write_first(self.vectors, key, write)
                self.graph.commit(key, write)
            else:
                self.graph.abort(key, txn)  # nothing to write: free the claims
        except BaseException:
            self.graph.abort(key, txn)
            raise
        lost = {owners[n] for n in proposals if n not in claimed and n in owners}
        if lost:
            winners = self.graph.get_entities(key, sorted(lost))
            for norm, _name, _lat, _lon in new:
                owner = owners.get(norm)
                if norm in claimed or owner is None:
                    continue
                if owner in winners:  # (a claim is returned once its call committed)
                    out[norm] = winners[owner]
        return out
