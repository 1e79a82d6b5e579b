"""pkctl: picokube's kubectl, a small client with kubectl's verbs, flags and wording."""
