-- CreateTable
CREATE TABLE "mcp_policies" (
    "user_id" UUID NOT NULL,
    "scope" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "allow" TEXT[],
    "restrict" BOOLEAN NOT NULL,
    "deny" TEXT[],
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mcp_policies_pkey" PRIMARY KEY ("user_id","scope","subject")
);

-- CreateTable
CREATE TABLE "mcp_servers" (
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "transport" TEXT NOT NULL,
    "master_key_id" TEXT,
    "iv" BYTEA,
    "ciphertext" BYTEA,
    "auth_tag" BYTEA,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mcp_servers_pkey" PRIMARY KEY ("user_id","name")
);

-- AddForeignKey
ALTER TABLE "mcp_policies" ADD CONSTRAINT "mcp_policies_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "mcp_servers" ADD CONSTRAINT "mcp_servers_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
