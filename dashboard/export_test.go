package dashboard

// PageKeys is pageKeys, for tests.
var PageKeys = pageKeys
