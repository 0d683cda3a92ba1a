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
		{
			// connections are OpenAI-compatible endpoints. owner_id NULL
			// means instance-wide (set up by an admin or the desktop owner);
			// secrets are Fernet tokens, never plaintext.
			Name: "connections",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "owner_id", Type: "INTEGER REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "name", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "base_url", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "api_key_enc", Type: "TEXT NOT NULL DEFAULT ''", Secret: true},
				{Name: "headers_enc", Type: "TEXT NOT NULL DEFAULT ''", Secret: true},
				{Name: "ca_pem", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "insecure_tls", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "enabled", Type: "INTEGER NOT NULL DEFAULT 1"},
				{Name: "no_stream_options", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "last_error", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "models_refreshed_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
		},
		{
			// models are what a connection lists, plus the admin's
			// presentation and defaults. missing marks a model the endpoint
			// no longer lists (kept, since chats refer to it).
			Name: "models",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "connection_id", Type: "INTEGER NOT NULL REFERENCES connections(id) ON DELETE CASCADE"},
				{Name: "upstream_id", Type: "TEXT NOT NULL"},
				{Name: "display_name", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "description", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "avatar", Type: "BLOB"},
				{Name: "avatar_type", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "position", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "enabled", Type: "INTEGER NOT NULL DEFAULT 1"},
				{Name: "pinned", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "capabilities", Type: "TEXT NOT NULL DEFAULT '{}'"},
				{Name: "context_length", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "params", Type: "TEXT NOT NULL DEFAULT '{}'"},
				{Name: "system_prompt", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "upstream_meta", Type: "TEXT NOT NULL DEFAULT '{}'"},
				{Name: "missing", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				// context_length_override is the admin's context length (0:
				// none). context_length keeps what the endpoint reports, so a
				// refresh never overwrites the admin and clearing the override
				// restores the endpoint's value without a refresh.
				{Name: "context_length_override", Type: "INTEGER NOT NULL DEFAULT 0"},
				// restricted: only the users and groups in model_access (and
				// admins) may use the model. It is the flag, not the rows,
				// that restricts, so a model whose only group or user is
				// deleted (the rows cascade away) stays closed instead of
				// opening to everyone. Models with rows before the column
				// existed were restricted.
				{Name: "restricted", Type: "INTEGER NOT NULL DEFAULT 0",
					Fill: "UPDATE models SET restricted = 1 WHERE id IN (SELECT model_id FROM model_access)"},
			},
			Indexes: []Index{
				{Name: "models_connection_upstream", On: "models(connection_id, upstream_id)", Unique: true},
				{Name: "models_position", On: "models(position, id)"},
			},
		},
		{
			Name: "folders",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "user_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "name", Type: "TEXT NOT NULL"},
				{Name: "position", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "folders_user", On: "folders(user_id, position)"}},
		},
		{
			// chats belong to one user. deleted_at is the trash: a chat in
			// it can be restored until the trash is emptied.
			Name: "chats",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "user_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "folder_id", Type: "INTEGER REFERENCES folders(id) ON DELETE SET NULL"},
				{Name: "title", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "title_auto", Type: "INTEGER NOT NULL DEFAULT 1"},
				{Name: "model_id", Type: "INTEGER REFERENCES models(id) ON DELETE SET NULL"},
				{Name: "params", Type: "TEXT NOT NULL DEFAULT '{}'"},
				{Name: "system_prompt", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "draft", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "pinned", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "unread", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "deleted_at", Type: "INTEGER"},
				// tools_off: the chat's replies are offered no tools.
				{Name: "tools_off", Type: "INTEGER NOT NULL DEFAULT 0"},
				// knowledge_scoped: the chat's knowledge search is limited
				// to the bases in chat_knowledge_bases (even when none of
				// them is left).
				{Name: "knowledge_scoped", Type: "INTEGER NOT NULL DEFAULT 0"},
				// An agent chat (issue 15): kind 'agent' works on a host
				// over SSH. kind, ssh_profile_id and project_dir are fixed
				// when the chat is created; agent_mode (manual, plan, edit,
				// auto) changes freely and is read once per reply.
				// rewound_at: an edit or a regeneration rewound the
				// transcript (never the machine) at that time.
				{Name: "kind", Type: "TEXT NOT NULL DEFAULT 'chat'"},
				{Name: "ssh_profile_id", Type: "INTEGER REFERENCES ssh_profiles(id) ON DELETE SET NULL"},
				{Name: "project_dir", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "agent_mode", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "rewound_at", Type: "INTEGER"},
				// leaf_id: the chosen path's last message (issue 16: a
				// regenerated reply or an edited turn is a sibling, and the
				// transcript, requests and search follow the path ending
				// here). NULL: the chat never had a version, its newest
				// message is the leaf; a message no longer in the chat reads
				// the same. Not a foreign key: read through leafSQL, which
				// checks it.
				{Name: "leaf_id", Type: "INTEGER"},
				// Compaction (issue 16): compact_summary stands for the
				// chosen path's turns up to compacted_through in requests.
				// compacted_through is a plain id, not a foreign key: a
				// version switch or a delete can take it off the path, so
				// it is validated on every read (store.ChatCompaction).
				{Name: "compact_summary", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "compacted_through", Type: "INTEGER"},
				{Name: "compacted_at", Type: "INTEGER"},
			},
			Indexes: []Index{
				{Name: "chats_user_updated", On: "chats(user_id, deleted_at, updated_at)"},
				// Foreign keys are checked by searching the child column: without
				// these, deleting a folder or a connection's models scans every
				// chat once per deleted row.
				{Name: "chats_folder", On: "chats(folder_id)"},
				{Name: "chats_ssh_profile", On: "chats(ssh_profile_id)"},
				{Name: "chats_model", On: "chats(model_id)"},
			},
		},
		{
			// messages: one row per message, never a chat as one blob.
			// status is final, streaming, stopped, error, length or
			// interrupted; only non-streaming rows are in the search index.
			Name: "messages",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "chat_id", Type: "INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE"},
				{Name: "parent_id", Type: "INTEGER REFERENCES messages(id) ON DELETE SET NULL"},
				{Name: "role", Type: "TEXT NOT NULL"},
				{Name: "content", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "reasoning", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "status", Type: "TEXT NOT NULL DEFAULT 'final'"},
				{Name: "error", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "model_label", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "metrics", Type: "TEXT NOT NULL DEFAULT '{}'"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				// parts is how a reply divides into its parts (store.Part):
				// JSON, empty for a reply that is its reasoning and then its
				// text (every row from before it existed).
				{Name: "parts", Type: "TEXT NOT NULL DEFAULT ''"},
			},
			Indexes: []Index{
				{Name: "messages_chat", On: "messages(chat_id, id)"},
				// parent_id's ON DELETE SET NULL searches children for every
				// deleted message; without this, emptying the trash or rewinding
				// a chat scans the whole table once per message.
				{Name: "messages_parent", On: "messages(parent_id)"},
			},
		},
		{
			// sessions are server-side logins. Only a SHA-256 of the token is
			// stored, so a copy of the database signs no one in. expires_at
			// is the earlier of the idle and the absolute limit, kept current
			// when the session is renewed, so one comparison decides.
			Name: "sessions",
			Columns: []Column{
				{Name: "token_hash", Type: "TEXT PRIMARY KEY"},
				{Name: "user_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "last_seen_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "expires_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "user_agent", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "ip", Type: "TEXT NOT NULL DEFAULT ''"},
			},
			Indexes: []Index{
				{Name: "sessions_user", On: "sessions(user_id)"},
				{Name: "sessions_expires", On: "sessions(expires_at)"},
			},
		},
		{
			// groups grant permissions (a JSON list of names) to their
			// members, on top of the instance baseline. A group never denies.
			Name: "groups",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "name", Type: "TEXT NOT NULL"},
				{Name: "permissions", Type: "TEXT NOT NULL DEFAULT '[]'"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "groups_name", On: "groups(name COLLATE NOCASE)", Unique: true}},
		},
		{
			Name: "group_members",
			Columns: []Column{
				{Name: "group_id", Type: "INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE"},
				{Name: "user_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
			},
			Constraints: []string{"PRIMARY KEY (group_id, user_id)"},
			// The primary key serves lookups by group; this one serves "which
			// groups is this user in" and the user foreign key.
			Indexes: []Index{{Name: "group_members_user", On: "group_members(user_id)"}},
		},
		{
			// model_access lists who may use an instance-wide model whose
			// models.restricted is set (and admins, and holders of
			// models.view_all); an unrestricted model is for everyone. Each
			// row names a user or a group.
			Name: "model_access",
			Columns: []Column{
				{Name: "model_id", Type: "INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE"},
				{Name: "user_id", Type: "INTEGER REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "group_id", Type: "INTEGER REFERENCES groups(id) ON DELETE CASCADE"},
			},
			Indexes: []Index{
				{Name: "model_access_model", On: "model_access(model_id)"},
				{Name: "model_access_user", On: "model_access(user_id)"},
				{Name: "model_access_group", On: "model_access(group_id)"},
			},
		},
		{
			// attachments are uploaded files. An upload is unbound
			// (message_id NULL) and belongs to its uploader until they send
			// it with a message; unbound rows are swept after a day. The
			// bytes live in <data dir>/files/<storage_name>, a random name
			// (attach.StorageName), never the user's name; text holds what
			// was extracted once at upload (PDF, text files).
			Name: "attachments",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "user_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "message_id", Type: "INTEGER REFERENCES messages(id) ON DELETE CASCADE"},
				{Name: "kind", Type: "TEXT NOT NULL"},
				{Name: "mime", Type: "TEXT NOT NULL"},
				{Name: "display_name", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "storage_name", Type: "TEXT NOT NULL"},
				{Name: "size", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "text", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "note", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "width", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "height", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "position", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				// source_path and source_label say where an attachment
				// chosen with @ came from (a project file's path and
				// user@host:dir, a library document's name and base):
				// the model's document tag carries them.
				{Name: "source_path", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "source_label", Type: "TEXT NOT NULL DEFAULT ''"},
			},
			Indexes: []Index{
				{Name: "attachments_message", On: "attachments(message_id, position)"},
				{Name: "attachments_user", On: "attachments(user_id, message_id)"},
				{Name: "attachments_storage", On: "attachments(storage_name)", Unique: true},
			},
		},
		{
			// audio_settings are the speech-to-text and text-to-speech
			// endpoints (OpenAI-shaped /v1/audio/*): user_id NULL is the
			// instance's (set by an admin, may be on the LAN), a user's row
			// overrides it and is reached only through the SSRF-guarded
			// client. Keys are Fernet tokens.
			Name: "audio_settings",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "user_id", Type: "INTEGER REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "stt_url", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "stt_key_enc", Type: "TEXT NOT NULL DEFAULT ''", Secret: true},
				{Name: "stt_model", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "tts_url", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "tts_key_enc", Type: "TEXT NOT NULL DEFAULT ''", Secret: true},
				{Name: "tts_model", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "tts_voice", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "voices", Type: "TEXT NOT NULL DEFAULT '[]'"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "audio_settings_user", On: "audio_settings(user_id)"}},
		},
		{
			// prompt_overrides are an administrator's wording of harness
			// fragments (backend/prompts), by fragment key. The defaults
			// live in code and text equal to a default is never stored, so
			// a later release's better default reaches the instance; an
			// empty text means the fragment is off.
			Name: "prompt_overrides",
			Columns: []Column{
				{Name: "key", Type: "TEXT PRIMARY KEY"},
				{Name: "text", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
		},
		{
			// custom_tools are HTTP tools an administrator defines (backend/
			// customtools): a request template the model fills through its
			// arguments. headers is a JSON list of {name, value} templates;
			// secret_enc a Fernet token. restricted: only the groups in
			// custom_tool_access (and admins) are offered it, as with
			// models.restricted.
			Name: "custom_tools",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "name", Type: "TEXT NOT NULL"},
				{Name: "description", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "parameters", Type: "TEXT NOT NULL DEFAULT '{}'"},
				{Name: "method", Type: "TEXT NOT NULL DEFAULT 'GET'"},
				{Name: "url", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "headers", Type: "TEXT NOT NULL DEFAULT '[]'"},
				{Name: "body", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "secret_enc", Type: "TEXT NOT NULL DEFAULT ''", Secret: true},
				{Name: "guidance", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "enabled", Type: "INTEGER NOT NULL DEFAULT 1"},
				{Name: "restricted", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "custom_tools_name", On: "custom_tools(name)", Unique: true}},
		},
		{
			Name: "custom_tool_access",
			Columns: []Column{
				{Name: "tool_id", Type: "INTEGER NOT NULL REFERENCES custom_tools(id) ON DELETE CASCADE"},
				{Name: "group_id", Type: "INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE"},
			},
			Constraints: []string{"PRIMARY KEY (tool_id, group_id)"},
			Indexes:     []Index{{Name: "custom_tool_access_group", On: "custom_tool_access(group_id)"}},
		},
		{
			// mcp_servers are remote MCP servers (backend/mcp) whose tools
			// replies may call. secret_enc is one Fernet token holding the
			// bearer token and extra headers; tools is the last tools/list,
			// cleaned, as JSON (a discovered tool is JSON, not a row);
			// tool_off lists the server's tool names an administrator
			// switched off (absent = on); groups are the group ids that may
			// use it ('[]' = everyone holding tools.mcp).
			Name: "mcp_servers",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "name", Type: "TEXT NOT NULL"},
				{Name: "slug", Type: "TEXT NOT NULL"},
				{Name: "url", Type: "TEXT NOT NULL"},
				{Name: "secret_enc", Type: "TEXT NOT NULL DEFAULT ''", Secret: true},
				{Name: "enabled", Type: "INTEGER NOT NULL DEFAULT 1"},
				{Name: "groups", Type: "TEXT NOT NULL DEFAULT '[]'"},
				{Name: "guidance", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "tools", Type: "TEXT NOT NULL DEFAULT '[]'"},
				{Name: "tool_off", Type: "TEXT NOT NULL DEFAULT '[]'"},
				{Name: "refreshed_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "refresh_error", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "mcp_servers_slug", On: "mcp_servers(slug)", Unique: true}},
		},
		{
			// knowledge_bases hold documents; a base, never a document, is
			// what is shared (library_shares), so "who can see this?" is
			// answered by one row per base, not by checking every file.
			Name: "knowledge_bases",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "owner_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "name", Type: "TEXT NOT NULL"},
				{Name: "description", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "knowledge_bases_owner", On: "knowledge_bases(owner_id)"}},
		},
		{
			// documents are files a person filed into a knowledge base,
			// through the attachment pipeline (typed by bytes, text
			// extracted once). The bytes live in <data dir>/files under
			// storage_name like an attachment's; text is the whole
			// extracted text, split into document_chunks for search.
			Name: "documents",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "base_id", Type: "INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE"},
				{Name: "owner_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "kind", Type: "TEXT NOT NULL"},
				{Name: "mime", Type: "TEXT NOT NULL"},
				{Name: "display_name", Type: "TEXT NOT NULL"},
				{Name: "storage_name", Type: "TEXT NOT NULL"},
				{Name: "size", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "text", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "note", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{
				{Name: "documents_base", On: "documents(base_id)"},
				{Name: "documents_owner", On: "documents(owner_id)"},
				// The orphan sweep asks, per file, whether a row names it.
				{Name: "documents_storage", On: "documents(storage_name)", Unique: true},
			},
		},
		{
			// document_chunks are a document's text in pieces of about a
			// thousand characters, the unit knowledge search ranks and
			// returns (document_chunks_fts). base_id is the document's,
			// copied so a search filters on visible bases without a join.
			Name: "document_chunks",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "document_id", Type: "INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE"},
				{Name: "base_id", Type: "INTEGER NOT NULL"},
				{Name: "seq", Type: "INTEGER NOT NULL"},
				{Name: "text", Type: "TEXT NOT NULL"},
			},
			Indexes: []Index{
				{Name: "document_chunks_document", On: "document_chunks(document_id, seq)"},
				{Name: "document_chunks_base", On: "document_chunks(base_id)"},
			},
		},
		{
			// notes are Markdown written by the model (notes_write) or by
			// their owner on the Notes page; searched, never injected whole.
			Name: "notes",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "owner_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "title", Type: "TEXT NOT NULL"},
				{Name: "body", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "notes_owner", On: "notes(owner_id, updated_at)"}},
		},
		{
			// memories are short facts about their owner, injected whole
			// into every request (so each is capped short and their total
			// is capped); never shared.
			Name: "memories",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "owner_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "text", Type: "TEXT NOT NULL"},
				{Name: "source", Type: "TEXT NOT NULL DEFAULT 'person'"}, // person | model
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "memories_owner", On: "memories(owner_id)"}},
		},
		{
			// skills are named instructions: only their name and one-line
			// description are injected (an index); the body is read by the
			// skill_read tool when the model decides it needs it.
			Name: "skills",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "owner_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "name", Type: "TEXT NOT NULL"},
				{Name: "description", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "body", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "skills_owner_name", On: "skills(owner_id, name COLLATE NOCASE)", Unique: true}},
		},
		{
			// library_shares grant reading one library item (kind: base,
			// note or skill) to a person or a group; exactly one of
			// user_id and group_id is set. Sharing never grants writing,
			// and administrators get nothing here they were not given
			// (store.Visible is the one rule).
			Name: "library_shares",
			Columns: []Column{
				{Name: "kind", Type: "TEXT NOT NULL"},
				{Name: "item_id", Type: "INTEGER NOT NULL"},
				{Name: "user_id", Type: "INTEGER REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "group_id", Type: "INTEGER REFERENCES groups(id) ON DELETE CASCADE"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{
				{Name: "library_shares_item", On: "library_shares(kind, item_id)"},
				{Name: "library_shares_user", On: "library_shares(user_id)"},
				{Name: "library_shares_group", On: "library_shares(group_id)"},
			},
		},
		{
			// chat_knowledge_bases scope a chat's knowledge search to some
			// bases. chats.knowledge_scoped says a scope was chosen: a
			// scoped chat whose bases are all gone searches nothing, never
			// everything (no rows and not scoped = everything visible).
			Name: "chat_knowledge_bases",
			Columns: []Column{
				{Name: "chat_id", Type: "INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE"},
				{Name: "base_id", Type: "INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE"},
			},
			Constraints: []string{"PRIMARY KEY (chat_id, base_id)"},
			Indexes:     []Index{{Name: "chat_knowledge_bases_base", On: "chat_knowledge_bases(base_id)"}},
		},
		{
			// ssh_profiles are the SSH connections agent chats work on,
			// private to their owner. secret_enc is one Fernet token (the
			// private key in OpenSSH PEM for auth 'key', the password for
			// auth 'password'); public_key is the key's authorized_keys
			// line. host_key is the pinned host key (authorized_keys form),
			// valid only for pinned_host:pinned_port: moving the profile
			// forgets it.
			Name: "ssh_profiles",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "user_id", Type: "INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE"},
				{Name: "name", Type: "TEXT NOT NULL"},
				{Name: "host", Type: "TEXT NOT NULL"},
				{Name: "port", Type: "INTEGER NOT NULL DEFAULT 22"},
				{Name: "username", Type: "TEXT NOT NULL"},
				{Name: "auth", Type: "TEXT NOT NULL DEFAULT 'key'"},
				{Name: "secret_enc", Type: "TEXT NOT NULL DEFAULT ''", Secret: true},
				{Name: "public_key", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "host_key", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "pinned_host", Type: "TEXT NOT NULL DEFAULT ''"},
				{Name: "pinned_port", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "ssh_profiles_user", On: "ssh_profiles(user_id)"}},
		},
		{
			// suggestions are the cards of the new-chat screen, kept by
			// administrators: choosing one fills the composer with prompt,
			// or sends it when send is 1. model_id set: shown only when
			// that model is chosen. Seeded once (setting
			// suggestions_seeded), so deleting the defaults sticks.
			Name: "suggestions",
			Columns: []Column{
				{Name: "id", Type: "INTEGER PRIMARY KEY"},
				{Name: "title", Type: "TEXT NOT NULL"},
				{Name: "prompt", Type: "TEXT NOT NULL"},
				{Name: "send", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "model_id", Type: "INTEGER REFERENCES models(id) ON DELETE CASCADE"},
				{Name: "position", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "created_at", Type: "INTEGER NOT NULL DEFAULT 0"},
				{Name: "updated_at", Type: "INTEGER NOT NULL DEFAULT 0"},
			},
			Indexes: []Index{{Name: "suggestions_position", On: "suggestions(position)"}},
		},
	},
	FTS: []FTS{
		{Name: "messages_fts", Table: "messages", RowID: "id", Columns: []string{"content"},
			When: "status != 'streaming'", Options: "tokenize='unicode61 remove_diacritics 2'"},
		{Name: "chats_fts", Table: "chats", RowID: "id", Columns: []string{"title"},
			Options: "tokenize='unicode61 remove_diacritics 2'"},
		{Name: "document_chunks_fts", Table: "document_chunks", RowID: "id", Columns: []string{"text"},
			Options: "tokenize='unicode61 remove_diacritics 2'"},
		{Name: "notes_fts", Table: "notes", RowID: "id", Columns: []string{"title", "body"},
			Options: "tokenize='unicode61 remove_diacritics 2'"},
	},
}
