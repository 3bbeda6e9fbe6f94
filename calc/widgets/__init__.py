"""The calculator widgets, one module each (`calc.widgets.base` says what a module holds).
They are registered, in page order, in `calc.render.WIDGETS`."""
