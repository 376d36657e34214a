// The wiring lives here.
