"""A pyqtgraph layout widget that reports every mouse move over its viewport.

pyqtgraph's ``sigMouseMoved`` drops moves closer than 10 ms apart, which can leave a hover
label on the wrong cell, so the plots filter the viewport's events themselves. Subclasses
install the filter (``self.viewport().installEventFilter(self)``) and implement
``_on_mouse_moved(scene_pos)``; a move outside the widget is reported far off-scene.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF

OFF_SCENE = QPointF(-1e9, -1e9)


class HoverLayoutWidget(pg.GraphicsLayoutWidget):
    def _on_mouse_moved(self, scene_pos) -> None:
        raise NotImplementedError

    def fit_layout_to_view(self) -> None:
        """Lay the plots out at the view's size again. A layout whose minimum width once grew past
        the view (a long message) keeps that width until the next resize, even when its content
        has become narrower: the plots were drawn past the right edge (1366 x 768, the timing
        chart after its "no runs" message)."""
        if not getattr(self, "closed", False) and self.centralWidget is not None:
            self.setRange(self.range, padding=0, disableAutoPixel=False)

    def close(self) -> bool:
        # pyqtgraph's close() replaces the viewport; a filter still on it crashes PySide6 there
        self.viewport().removeEventFilter(self)
        return super().close()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        # pyqtgraph's close() drops the scene before the viewport: nothing to describe then
        if not getattr(self, "closed", False) and self.sceneObj is not None and watched is self.viewport():
            if event.type() == QEvent.Type.MouseMove:
                self._on_mouse_moved(self.mapToScene(event.position().toPoint()))
            elif event.type() == QEvent.Type.Leave:
                self._on_mouse_moved(OFF_SCENE)
        return super().eventFilter(watched, event)
