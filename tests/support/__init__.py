"""Fakes and builders the tests share: loopback servers, fixture records, the Docker test engine."""
