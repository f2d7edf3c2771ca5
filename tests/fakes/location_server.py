"""A fake Amazon Location Service place index on loopback: answers
``SearchPlaceIndexForText`` (POST /places/v0/indexes/{name}/search/text)
from a small gazetteer, through the real boto3 client
(``AWS_ENDPOINT_URL_LOCATION``). Requests are recorded like the other fakes'."""

from __future__ import annotations

import re

from ._server import FakeServer, RecordedRequest, Response

SEARCH = re.compile(r"^/places/v0/indexes/([^/]+)/search/text$")

# name -> (lon, lat), GeoJSON order as the API answers
PLACES = {
    "paris": (2.3488, 48.85341),
    "lyon": (4.84789, 45.74906),
    "versailles": (2.13042, 48.80146),
    "marseille": (5.38107, 43.29695),
    "new york": (-74.00597, 40.71427),
}


class FakeLocation(FakeServer):
    def _handle(self, req: RecordedRequest) -> Response:
        m = SEARCH.match(req.path)
        if req.method != "POST" or not m:
            return Response(404, {"message": f"{req.method} {req.path}: not found"})
        text = str(req.get("Text", ""))
        point = PLACES.get(text.strip().lower())
        results = []
        if point is not None:
            results.append(
                {"Place": {"Label": text, "Geometry": {"Point": list(point)}}, "Relevance": 1.0}
            )
        summary = {"Text": text, "DataSource": "Esri", "MaxResults": req.get("MaxResults", 1)}
        return Response(200, {"Results": results, "Summary": summary})

    def operations(self) -> set[str]:
        """The IAM actions of the requests received."""
        return {"geo:SearchPlaceIndexForText" for r in self.requests if SEARCH.match(r.path)}
