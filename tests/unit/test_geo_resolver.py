"""The geo resolvers: the embedded GeoNames one (real data, built once per
process) and the Amazon Location Service one (a fake client)."""

from __future__ import annotations

from typing import Any

import pytest

from gligabao.config import Settings
from gligabao.errors import UpstreamError
from gligabao.geo.resolver import (
    GeonamesResolver,
    LocationServiceResolver,
    default_resolver,
    fold,
)

PARIS = (48.85341, 2.3488)
SAO_PAULO = (-23.5475, -46.63611)
SPRINGFIELD_MO = (37.21533, -93.29824)  # 170,188: the most populous Springfield


@pytest.fixture(scope="module")
def geo() -> GeonamesResolver:
    return GeonamesResolver()


def test_fold() -> None:
    assert fold("São  Paulo") == "sao paulo"
    assert fold("SAINT-ÉTIENNE") == "saint etienne"
    assert fold("  ") == ""


@pytest.mark.parametrize("name", ["Paris", "paris", "PARIS", " Paris "])
def test_case_insensitive(geo: GeonamesResolver, name: str) -> None:
    assert geo.resolve(name) == pytest.approx(PARIS)


@pytest.mark.parametrize("name", ["São Paulo", "Sao Paulo", "sao paulo", "SÃO PAULO"])
def test_accent_insensitive(geo: GeonamesResolver, name: str) -> None:
    assert geo.resolve(name) == pytest.approx(SAO_PAULO)


def test_ambiguous_name_is_the_most_populous(geo: GeonamesResolver) -> None:
    assert geo.resolve("Springfield") == pytest.approx(SPRINGFIELD_MO)
    assert geo.resolve("Paris") == pytest.approx(PARIS)  # not Paris, Texas


def test_qualified_names(geo: GeonamesResolver) -> None:
    assert geo.resolve("Springfield, Illinois") == pytest.approx((39.80172, -89.64371))
    assert geo.resolve("Paris, Texas") == pytest.approx((33.66094, -95.55551))
    assert geo.resolve("Paris, France") == pytest.approx(PARIS)
    assert geo.resolve("10 Rue de la République, Lyon, France") == pytest.approx(
        (45.74906, 4.84789)
    )
    # A known head outside the region named: no match rather than a guess.
    assert geo.resolve("Springfield, France") is None
    # An unknown head within a country or state: too vague to place.
    assert geo.resolve("Nowhereville, Texas") is None


@pytest.mark.parametrize("name", ["Nowhereville", "", "   ", "Xyzzy Plugh", "!!!"])
def test_unknown_is_none(geo: GeonamesResolver, name: str) -> None:
    assert geo.resolve(name) is None


def test_alternate_names(geo: GeonamesResolver) -> None:
    london = geo.resolve("London")
    assert london is not None
    assert geo.resolve("Londres") == london
    assert geo.resolve("München") == geo.resolve("Munich")
    moscow = geo.resolve("Москва")
    assert moscow == pytest.approx((55.75, 37.62), abs=0.05)


def test_countries_are_their_capital(geo: GeonamesResolver) -> None:
    assert geo.resolve("France") == pytest.approx(PARIS)
    brasilia = geo.resolve("Brazil")  # "Brasilia" in the data, "Brasília" in the city
    assert brasilia == pytest.approx((-15.78, -47.93), abs=0.05)
    washington = geo.resolve("United States")
    assert washington == pytest.approx((38.895, -77.036), abs=0.05)
    assert geo.resolve("USA") == washington
    assert geo.resolve("united states of america") == washington
    place = geo.place("Germany")
    assert place is not None and place.kind == "country"


def test_us_states_are_their_most_populous_city(geo: GeonamesResolver) -> None:
    assert geo.resolve("California") == pytest.approx((34.05, -118.24), abs=0.05)  # LA
    assert geo.resolve("New York") == pytest.approx((40.71, -74.01), abs=0.05)  # NYC
    place = geo.place("Illinois")
    assert place is not None and place.kind == "us_state" and place.admin1 == "IL"


def test_continents(geo: GeonamesResolver) -> None:
    place = geo.place("Europe")
    assert place is not None and place.kind == "continent"


# ------------------------------------------------------- Amazon Location Service


class FakeLocation:
    def __init__(self, results: list[dict[str, Any]] | Exception) -> None:
        self.results = results
        self.calls: list[dict[str, Any]] = []

    def search_place_index_for_text(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        if isinstance(self.results, Exception):
            raise self.results
        return {"Summary": {}, "Results": self.results}


def _result(lon: float, lat: float, relevance: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"Place": {"Geometry": {"Point": [lon, lat]}, "Label": "x"}}
    if relevance is not None:
        out["Relevance"] = relevance
    return out


def test_location_service_point_is_lon_lat() -> None:
    fake = FakeLocation([_result(2.3488, 48.85341, 1.0)])
    r = LocationServiceResolver("my-index", "eu-west-1", client=fake)
    assert r.resolve("Paris") == pytest.approx(PARIS)
    assert fake.calls == [{"IndexName": "my-index", "Text": "Paris", "MaxResults": 1}]
    assert r.resolve("Paris") == pytest.approx(PARIS)
    assert len(fake.calls) == 1  # cached


def test_location_service_no_match() -> None:
    assert LocationServiceResolver("i", "us-east-1", client=FakeLocation([])).resolve("X") is None
    weak = FakeLocation([_result(1.0, 2.0, 0.2)])
    assert LocationServiceResolver("i", "us-east-1", client=weak).resolve("Xy") is None
    unscored = FakeLocation([_result(1.0, 2.0)])  # HERE indexes give no relevance
    assert LocationServiceResolver("i", "us-east-1", client=unscored).resolve("Xy") == (2.0, 1.0)
    assert LocationServiceResolver("i", "us-east-1", client=unscored).resolve("  ") is None


def test_location_service_failure_is_upstream() -> None:
    r = LocationServiceResolver("i", "us-east-1", client=FakeLocation(RuntimeError("boom")))
    with pytest.raises(UpstreamError):
        r.resolve("Paris")


def test_default_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GB_GEO_PLACE_INDEX", raising=False)
    assert isinstance(default_resolver(Settings(geo=True, region="eu-west-3")), GeonamesResolver)
    monkeypatch.setenv("GB_GEO_PLACE_INDEX", "places")
    r = default_resolver(Settings(geo=True, region="eu-west-3"))
    assert isinstance(r, LocationServiceResolver)
    assert (r.index_name, r.region) == ("places", "eu-west-3")


def test_no_resolver_available(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from gligabao.errors import NotConfigured

    monkeypatch.delenv("GB_GEO_PLACE_INDEX", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(NotConfigured, match="GB_GEO_PLACE_INDEX"):
        default_resolver(Settings(geo=True))
