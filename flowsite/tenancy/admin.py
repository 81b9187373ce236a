"""Admin pages for tenants, their members and groups, and their global policies."""

from django.contrib import admin
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType

from flowsite.tenancy.models import Membership, Tenant, TenantGroup, TenantGroupPermission, TenantUserPermission


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class _GlobalPolicyInline(admin.TabularInline):
    extra = 0
    verbose_name = "global policy"

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "permission":
            kwargs["queryset"] = Permission.objects.filter(content_type=ContentType.objects.get_for_model(Tenant))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class UserPolicyInline(_GlobalPolicyInline):
    model = TenantUserPermission
    autocomplete_fields = ["user"]
    verbose_name_plural = "global policies held by users"


class GroupPolicyInline(_GlobalPolicyInline):
    model = TenantGroupPermission
    verbose_name_plural = "global policies held by groups"


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline, UserPolicyInline, GroupPolicyInline]


@admin.register(TenantGroup)
class TenantGroupAdmin(admin.ModelAdmin):
    list_display = ["name", "tenant"]
    list_filter = ["tenant"]
    search_fields = ["name"]
    readonly_fields = ["group"]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.group = Group.objects.create(name=f"{obj.tenant.slug}/{obj.name}")
        else:
            obj.group.name = f"{obj.tenant.slug}/{obj.name}"
            obj.group.save(update_fields=["name"])
        super().save_model(request, obj, form, change)
