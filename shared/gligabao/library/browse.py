"""The browse and forget methods of ``gligabao.Memory``
(docs/api.md#browse-and-forget): the query parameters checked as the API
checks them, then the handlers' own functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from ..api.schemas import (
    ArtifactDetailOut,
    ArtifactsOut,
    EdgeDetailOut,
    EntitiesOut,
    EntityDetailOut,
    ForgottenOut,
)
from ..models import DatasetKey

M = TypeVar("M", bound=BaseModel)


class Browsing:
    """Mixed into Memory, which gives ``dataset``, ``_user`` and ``_call``."""

    dataset: str | None

    def _user(self, user_id: str | None) -> str:
        raise NotImplementedError

    def _call(self, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError

    def _browse(
        self,
        page: Callable[[DatasetKey, dict[str, str]], dict[str, Any]],
        model: type[M],
        user_id: str | None,
        dataset: str | None,
        **params: Any,
    ) -> M:
        """A browse route: its query parameters checked as the API checks them."""
        from ..handlers.browse import params_key

        user = self._user(user_id)
        query = query_params(user_id=user, dataset=dataset or self.dataset, **params)
        allowed = {k for k in params if k not in ("user_id", "dataset")}
        return _as(model, self._call(lambda: page(params_key(query, allowed), query)))

    def entities(
        self,
        *,
        q: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        user_id: str | None = None,
        dataset: str | None = None,
        type: str | None = None,
    ) -> EntitiesOut:
        """One page of entities, newest updated first (``q``: names matching;
        ``type``: of that entity type)."""
        from ..handlers.browse import entities_page

        return self._browse(
            entities_page,
            EntitiesOut,
            user_id,
            dataset,
            q=q,
            limit=limit,
            cursor=cursor,
            type=type,
        )

    def entity(
        self,
        entity_id: int,
        *,
        user_id: str | None = None,
        dataset: str | None = None,
        edge_type: str | None = None,
    ) -> EntityDetailOut:
        """An entity's page (``edge_type``: only its facts of that relation or type)."""
        from ..handlers.browse import entity_page

        wanted = _row_id(entity_id)
        return self._browse(
            lambda key, params: entity_page(key, wanted, params),
            EntityDetailOut,
            user_id,
            dataset,
            edge_type=edge_type,
        )

    def edge(
        self, edge_id: int, *, user_id: str | None = None, dataset: str | None = None
    ) -> EdgeDetailOut:
        from ..handlers.browse import browser

        wanted = _row_id(edge_id)
        return self._browse(
            lambda key, _: browser().edge(key, wanted), EdgeDetailOut, user_id, dataset
        )

    def artifact(
        self, artifact_id: int, *, user_id: str | None = None, dataset: str | None = None
    ) -> ArtifactDetailOut:
        from ..handlers.browse import browser

        wanted = _row_id(artifact_id)
        return self._browse(
            lambda key, _: browser().artifact(key, wanted), ArtifactDetailOut, user_id, dataset
        )

    def artifacts(
        self,
        *,
        session_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        user_id: str | None = None,
        dataset: str | None = None,
    ) -> ArtifactsOut:
        """One page of remembered texts (a session's in the order said)."""
        from ..handlers.browse import artifacts_page

        return self._browse(
            artifacts_page,
            ArtifactsOut,
            user_id,
            dataset,
            session_id=session_id,
            limit=limit,
            cursor=cursor,
        )

    def forget(
        self, artifact_id: int, *, user_id: str | None = None, dataset: str | None = None
    ) -> ForgottenOut:
        """Forget one remembered text (``NotFound`` when it is already gone)."""
        from ..handlers.browse import forget_artifact

        wanted = _row_id(artifact_id)
        return self._browse(
            lambda key, _: forget_artifact(key, wanted), ForgottenOut, user_id, dataset
        )


def _row_id(value: int) -> int:
    from ..api.params import param_id

    return param_id(str(value))


def query_params(**values: Any) -> dict[str, str]:
    """Query parameters as the API reads them: strings, the unset ones left out."""
    return {k: str(v) for k, v in values.items() if v is not None}


def _as(model: type[M], payload: Any) -> M:
    return model.model_validate(payload)
