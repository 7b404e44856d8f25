package convert

// PydanticFixtures is pydanticFixtures for the external tests.
var PydanticFixtures = pydanticFixtures
