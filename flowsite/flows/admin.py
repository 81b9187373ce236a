"""Admin pages for flows: process groups, processors, connections, parameter contexts, versions
and component policies."""

from django.contrib import admin
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType

from flowsite.flows.models import (
    Component,
    ComponentGroupPermission,
    ComponentUserPermission,
    Connection,
    FlowVersion,
    ParameterContext,
    ProcessGroup,
    Processor,
)


class _PolicyInline(admin.TabularInline):
    extra = 0
    fk_name = "content_object"
    verbose_name = "policy"

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "permission":
            kwargs["queryset"] = Permission.objects.filter(content_type=ContentType.objects.get_for_model(Component))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class UserPolicyInline(_PolicyInline):
    model = ComponentUserPermission
    autocomplete_fields = ["user"]
    verbose_name_plural = "policies held by users"


class GroupPolicyInline(_PolicyInline):
    model = ComponentGroupPermission
    verbose_name_plural = "policies held by groups"


class _ComponentAdmin(admin.ModelAdmin):
    list_filter = ["tenant"]
    search_fields = ["name", "versioned_id", "id"]
    readonly_fields = ["id", "tenant", "kind", "versioned_id", "version", "last_client_id", "last_modifier",
                       "created_at", "updated_at"]
    list_select_related = ["tenant", "parent"]

    def get_inlines(self, request, obj):
        return [] if obj is None else [UserPolicyInline, GroupPolicyInline]

    def has_add_permission(self, request):
        return False  # components are created in the portal or the API, inside a group

    def save_model(self, request, obj, form, change):
        obj.version += 1
        obj.last_modifier = request.user.get_username()
        obj.last_client_id = ""
        super().save_model(request, obj, form, change)

    def save_formset(self, request, form, formset, change):
        for instance in formset.save(commit=False):
            instance.content_object = form.instance.base
            instance.save()
        for removed in formset.deleted_objects:
            removed.delete()


@admin.register(ProcessGroup)
class ProcessGroupAdmin(_ComponentAdmin):
    list_display = ["name", "tenant", "parent", "updated_at"]
    readonly_fields = _ComponentAdmin.readonly_fields + ["parent", "document_extra"]
    exclude = ["extra"]


@admin.register(Processor)
class ProcessorAdmin(_ComponentAdmin):
    list_display = ["name", "type", "scheduled_state", "tenant", "parent"]
    list_filter = ["tenant", "scheduled_state"]
    readonly_fields = _ComponentAdmin.readonly_fields + ["parent", "type", "sensitive_properties_set"]
    exclude = ["extra", "sensitive_properties"]

    @admin.display(description="sensitive properties set")
    def sensitive_properties_set(self, obj):
        return ", ".join(sorted(obj.sensitive_properties)) or "none"


@admin.register(Connection)
class ConnectionAdmin(_ComponentAdmin):
    list_display = ["__str__", "source", "destination", "tenant", "parent"]
    readonly_fields = _ComponentAdmin.readonly_fields + ["parent", "source", "destination"]
    exclude = ["extra"]


@admin.register(ParameterContext)
class ParameterContextAdmin(admin.ModelAdmin):
    list_display = ["name", "tenant"]
    list_filter = ["tenant"]
    search_fields = ["name"]
    readonly_fields = ["parameters"]
    exclude = ["extra"]


@admin.register(FlowVersion)
class FlowVersionAdmin(admin.ModelAdmin):
    list_display = ["group", "number", "author", "created_at", "comment"]
    list_filter = ["group__tenant"]
    readonly_fields = ["group", "number", "author", "created_at", "definition"]

    def has_add_permission(self, request):
        return False
