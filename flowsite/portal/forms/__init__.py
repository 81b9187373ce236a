"""The portal's component forms: API representations laid out as fields, and posted fields
turned back into API request bodies (validation is the API serializers' own)."""
