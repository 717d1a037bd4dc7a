// Package postgres is kapi's storage backend on PostgreSQL.
package postgres
