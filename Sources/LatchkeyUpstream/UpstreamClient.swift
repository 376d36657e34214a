// The upstream client lives here.
