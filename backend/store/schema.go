package store

// Current is the declared schema of LLeMbas. Change it additively only: add
// tables, append columns (nullable or with a DEFAULT), add indexes. Sync
// applies it at every start. Renames and drops are manual (docs/NOTES.md).
var Current = Schema{
	Tables: []Table{
		{
			// meta holds facts about the database itself, such as which key
			// encrypted its secrets.
			Name: "meta",
			Columns: []Column{
				{Name: "key", Type: "TEXT PRIMARY KEY"},
				{Name: "value", Type: "TEXT NOT NULL"},
			},
		},
		{
			// users exists from the first run: the desktop owner is a real
			// admin row, so sharing the instance later needs no migration.
			Name: "users",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "username", Type: "TEXT NOT NULL"},
				{Name: "display_name", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "password_hash", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "is_admin", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "is_owner", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "status", Type: "TEXT NOT NULL DEFAULT 'active'"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "users_username", On: "users(username COLLATE NOCASE)", Unique: true}},
		},
		{
			// settings are instance settings edited at run time. The
			// environment only seeds them; once stored, the database wins.
			Name: "settings",
			Columns: []Column{
				{Name: "key", Type: "TEXT PRIMARY KEY"},
				{Name: "value", Type: "TEXT NOT NULL"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
		},
		{
			Name: "user_prefs",
			Columns: []Column{
				{Name: "user_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "key", Type: "TEXT NOT NULL"},
				{Name: "value", Type: "TEXT NOT NULL"},
			},
			Constraints: []string{"PRIMARY KEY (user_id, key)"},
		},
	},
}
